/** Fields every line has, shown in the line's head rather than as key=value. */
const HEAD = new Set(['level', 'time', 'msg', 'context', 'pid', 'hostname', 'reqId']);

/**
 * LOG_FORMAT=pretty: one JSON log line (as the logger wrote it, already redacted) as one line for a
 * person: `09:12:03.512 INFO  [Context] message key=value …`, the request id after the level. A
 * line that is not JSON passes as it is. No colours: the output may be a file.
 */
export function prettyLogLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object') return line;
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = String(entry.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const parts = [time, level];
  if (entry.reqId !== undefined) parts.push(`(${String(entry.reqId)})`);
  if (entry.context !== undefined) parts.push(`[${String(entry.context)}]`);
  if (entry.msg !== undefined) parts.push(String(entry.msg));
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD.has(key) || key === 'stack' || value === undefined) continue;
    parts.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  const stack = typeof entry.stack === 'string' ? `\n${entry.stack}` : '';
  return `${parts.filter(Boolean).join(' ')}${stack}\n`;
}

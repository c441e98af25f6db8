/** Whether the request announces a body (a length, or chunked): a refusal sent before reading it closes the connection. */
export function announcesBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

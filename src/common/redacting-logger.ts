import { LoggerService } from '@nestjs/common';

/** What the Nest logger writes through: Fastify's pino logger (a subset of its interface). */
export interface LineLogger {
  fatal(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  trace(obj: object, msg?: string): void;
}

type LineLevel = keyof LineLogger;

/**
 * Nest's logs (its own and every `new Logger(context)` of the service) as lines of the same logger
 * as Fastify's requests: one JSON object each, `context` a field, an error's stack under `stack`.
 * Nest's `verbose` is pino's `trace`, `log` its `info`. Secrets are taken out where every line
 * leaves, in the logger's stream (service-log.ts: redactSecrets), so nothing here can let one by.
 */
export class RedactingLogger implements LoggerService {
  constructor(private readonly lines: LineLogger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  /**
   * Nest's calling convention: the last string parameter is the context (a Logger with a context
   * appends it); error(message, stack?, context?) has the stack first, which may be undefined.
   */
  private write(level: LineLevel, message: unknown, params: unknown[]): void {
    const rest = [...params];
    const fields: Record<string, unknown> = {};
    if (rest.length && typeof rest[rest.length - 1] === 'string') fields.context = rest.pop();
    if (level === 'error' || level === 'fatal') {
      const stack = rest.shift();
      if (typeof stack === 'string') fields.stack = stack;
    }
    let text: string;
    if (message instanceof Error) {
      text = message.message;
      fields.stack ??= message.stack;
    } else if (typeof message === 'string') {
      text = message;
    } else {
      text = safeJson(message);
    }
    this.lines[level](fields, text);
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

import { ConsoleLogger, LogLevel } from '@nestjs/common';
import { redactSecrets } from './redact';

/** Nest's console logger with every line and stack passed through redactSecrets (see redact.ts). */
export class RedactingLogger extends ConsoleLogger {
  protected override formatMessage(
    logLevel: LogLevel,
    message: unknown,
    pidMessage: string,
    formattedLogLevel: string,
    contextMessage: string,
    timestampDiff: string,
  ): string {
    return redactSecrets(super.formatMessage(logLevel, message, pidMessage, formattedLogLevel, contextMessage, timestampDiff));
  }

  protected override printStackTrace(stack: string): void {
    // Nest calls this with whatever the caller passed as the trace, undefined included.
    super.printStackTrace(typeof stack === 'string' ? redactSecrets(stack) : stack);
  }
}

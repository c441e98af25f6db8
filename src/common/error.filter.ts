import type { IncomingMessage } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { bodyTimedOut } from './body-deadline';
import { DomainError } from './domain-error';
import { errorHeaders, fromFrameworkError, statusOf, toErrorBody } from './error-http-mapping';
import { redactSecrets } from './redact';

/** Every error leaves the service as `{error: CODE, message, ...}` with the code's status; internals are logged, never sent. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    // A body reader fails in its own words when the body deadline cuts it off; the cause is the deadline.
    const err = bodyTimedOut(http.getRequest<{ raw?: IncomingMessage }>()?.raw)
      ? new DomainError('REQUEST_TIMEOUT', 'the request body did not fully arrive in time')
      : fromFrameworkError(exception);
    if (err.code === 'INTERNAL')
      this.logger.error(redactSecrets(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)));
    const reply = http.getResponse();
    reply.status(statusOf(err.code)).headers(errorHeaders(err)).send(toErrorBody(err));
  }
}

import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { fromFrameworkError, headersOf, statusOf, toErrorBody } from './error-http-mapping';

/** Every error leaves the service as `{error: CODE, message, ...}` with the code's status; internals are logged, never sent. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const err = fromFrameworkError(exception);
    if (err.code === 'INTERNAL') this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    const reply = host.switchToHttp().getResponse();
    reply.status(statusOf(err.code)).headers(headersOf(err)).send(toErrorBody(err));
  }
}

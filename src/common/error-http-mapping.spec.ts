import { BadRequestException, HttpException, NotFoundException } from '@nestjs/common';
import { DomainError, versionConflict } from './domain-error';
import { errorHeaders, fromFrameworkError, statusOf, toErrorBody } from './error-http-mapping';

describe('error mapping', () => {
  it('keeps a domain error and its details', () => {
    const err = versionConflict(2, 5);
    expect(fromFrameworkError(err)).toBe(err);
    expect(statusOf(err.code)).toBe(409);
    expect(toErrorBody(err)).toMatchObject({ error: 'VERSION_CONFLICT', expectedVersion: 2, actualVersion: 5 });
  });

  it('gives the framework’s own errors stable codes', () => {
    expect(fromFrameworkError(new HttpException('Unsupported Media Type', 415)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(fromFrameworkError(new HttpException('Request body is too large', 413)).code).toBe('PAYLOAD_TOO_LARGE');
    expect(fromFrameworkError(new BadRequestException("Body is not valid JSON but content-type is set to 'application/json'")).code).toBe(
      'MALFORMED_JSON',
    );
    expect(fromFrameworkError(new NotFoundException()).code).toBe('NOT_FOUND');
    expect(fromFrameworkError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE' }).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('tells a refused caller when to try again', () => {
    const err = new DomainError('TOO_MANY_PENDING_UPLOADS', 'wait', { retryAfterSeconds: 12.5 });
    expect(statusOf(err.code)).toBe(429);
    expect(errorHeaders(err)).toEqual({ 'retry-after': '13' });
    expect(errorHeaders(versionConflict(1, 2))).toEqual({});
  });

  it('hides internals of anything unexpected', () => {
    const err = fromFrameworkError(new Error('connection to 10.0.0.5 refused'));
    expect(err.code).toBe('INTERNAL');
    expect(err.message).not.toContain('10.0.0.5');
    expect(statusOf(new DomainError('INTERNAL', 'x').code)).toBe(500);
  });

  it('answers the connection and stream limits with their status and headers', () => {
    expect(fromFrameworkError(new HttpException('the request body did not fully arrive within 10 ms', 408)).code).toBe('REQUEST_TIMEOUT');
    expect(statusOf('REQUEST_TIMEOUT')).toBe(408);
    expect(errorHeaders(new DomainError('REQUEST_TIMEOUT', 'x'))).toEqual({ connection: 'close' });
    expect(statusOf('TOO_MANY_STREAMS')).toBe(429);
    expect(errorHeaders(new DomainError('TOO_MANY_STREAMS', 'x'))).toEqual({ 'retry-after': '5' });
    expect(statusOf('STATE_TOO_LARGE')).toBe(422);
    expect(errorHeaders(new DomainError('VERSION_CONFLICT', 'x'))).toEqual({});
  });
});

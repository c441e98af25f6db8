import { DomainError } from './domain-error';
import { errorHeaders } from './error-http-mapping';
import { rateLimitHeaders } from './rate-limit-fields';

describe('RateLimit fields (draft-ietf-httpapi-ratelimit-headers)', () => {
  it('writes each policy as a String item with q and w, and its state with r and t', () => {
    expect(
      rateLimitHeaders([
        { policy: 'appends', limit: 20_000, windowSeconds: 10, remaining: 19_999.6, resetSeconds: 0.0005 },
        { policy: 'events', limit: 200_000, windowSeconds: 10, unit: 'events', remaining: 199_990, resetSeconds: 0.2 },
      ]),
    ).toEqual({
      'ratelimit-policy': '"appends";q=20000;w=10, "events";q=200000;w=10;es-unit="events"',
      ratelimit: '"appends";r=19999;t=1, "events";r=199990;t=1',
    });
  });

  it('marks a concurrency limit as such and leaves out its window', () => {
    expect(rateLimitHeaders([{ policy: 'streams', limit: 5, unit: 'concurrent-requests', remaining: 0 }])).toEqual({
      'ratelimit-policy': '"streams";q=5;qu="concurrent-requests"',
      ratelimit: '"streams";r=0',
    });
  });

  it('goes with a quota refusal wherever it is answered, t no earlier than Retry-After', () => {
    const err = new DomainError('RATE_LIMITED', 'slow down', {
      policy: 'uploads',
      limit: 60,
      windowSeconds: 3600,
      remaining: 0,
      retryAfterSeconds: 60,
    });
    expect(errorHeaders(err)).toEqual({
      'retry-after': '60',
      'ratelimit-policy': '"uploads";q=60;w=3600',
      ratelimit: '"uploads";r=0;t=60',
    });
    const streams = new DomainError('TOO_MANY_STREAMS', 'close one', {
      limit: 2,
      scope: 'tenant',
      policy: 'streams',
      unit: 'concurrent-requests',
      remaining: 0,
    });
    expect(errorHeaders(streams)).toEqual({
      'retry-after': '5',
      'ratelimit-policy': '"streams";q=2;qu="concurrent-requests"',
      ratelimit: '"streams";r=0;t=5',
    });
    expect(errorHeaders(new DomainError('QUOTA_EXCEEDED', 'full', { quota: 'storedEvents', limit: 5, stored: 5 }))).toEqual({});
  });
});

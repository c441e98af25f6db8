import { DomainError } from '../../common/domain-error';
import { StreamLimiter } from './stream-limiter';

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('was admitted');
}

describe('StreamLimiter', () => {
  it('refuses a key past its cap and admits it again once a stream closes', () => {
    const limiter = new StreamLimiter({ perKey: 2, perInstance: 10 });
    const a = limiter.acquire('k1');
    limiter.acquire('k1');
    const err = refusal(() => limiter.acquire('k1'));
    expect(err.code).toBe('TOO_MANY_STREAMS');
    expect(err.details).toEqual({ limit: 2, scope: 'key' });
    expect(limiter.acquire('k2')).toEqual(expect.any(Function)); // another key is not held up
    a();
    a(); // a second release must not free a slot someone else holds
    expect(limiter.count('k1')).toBe(1);
    limiter.acquire('k1');
    expect(refusal(() => limiter.acquire('k1')).details.scope).toBe('key');
  });

  it('refuses everyone past the instance cap', () => {
    const limiter = new StreamLimiter({ perKey: 5, perInstance: 3 });
    const slots = ['a', 'b', 'c'].map((k) => limiter.acquire(k));
    expect(refusal(() => limiter.acquire('d')).details).toEqual({ limit: 3, scope: 'instance' });
    slots[1]();
    expect(limiter.count()).toBe(2);
    limiter.acquire('d');
    expect(limiter.count()).toBe(3);
    expect(limiter.count('b')).toBe(0);
  });

  it('counts open streams by transport for the metrics, both against the same caps', () => {
    const limiter = new StreamLimiter({ perKey: 5, perInstance: 2 });
    const ws = limiter.acquire('k1', 'websocket');
    limiter.acquire('k1', 'sse');
    expect(limiter.countByTransport()).toEqual({ websocket: 1, sse: 1 });
    expect(refusal(() => limiter.acquire('k2', 'sse')).details.scope).toBe('instance');
    ws();
    ws();
    expect(limiter.countByTransport()).toEqual({ websocket: 0, sse: 1 });
  });
});

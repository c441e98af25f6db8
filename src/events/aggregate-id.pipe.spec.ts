import { DomainError } from '../common/domain-error';
import { AggregateIdPipe } from './aggregate-id.pipe';
import { LIMITS } from './event-limits';

describe('AggregateIdPipe', () => {
  const pipe = new AggregateIdPipe();

  it('passes a valid aggregate id through unchanged', () => {
    expect(pipe.transform('order-1')).toBe('order-1');
    expect(pipe.transform('a'.repeat(LIMITS.aggregateIdMax))).toBe('a'.repeat(LIMITS.aggregateIdMax));
  });

  it('refuses an id past the length limit or outside the pattern as VALIDATION_FAILED on aggregateId', () => {
    for (const bad of ['a'.repeat(LIMITS.aggregateIdMax + 1), 'has space', '-leading']) {
      const e = (() => {
        try {
          pipe.transform(bad);
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(DomainError);
      expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: expect.objectContaining({ field: 'aggregateId' }) });
    }
  });
});

import { DomainError } from '../common/domain-error';
import { AggregateTypePipe } from './aggregate-type.pipe';

describe('AggregateTypePipe', () => {
  const pipe = new AggregateTypePipe();

  it('passes a valid aggregate type through unchanged', () => {
    expect(pipe.transform('account')).toBe('account');
    expect(pipe.transform('a'.repeat(100))).toBe('a'.repeat(100));
  });

  it('refuses a type past 100 characters or outside the pattern as VALIDATION_FAILED on type', () => {
    for (const bad of ['a'.repeat(101), 'has space', '']) {
      let thrown: unknown;
      try {
        pipe.transform(bad);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect(thrown).toMatchObject({ code: 'VALIDATION_FAILED', details: expect.objectContaining({ field: 'type' }) });
    }
  });
});

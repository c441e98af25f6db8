import { DomainError } from '../common/domain-error';
import { AGGREGATE_ID_MAX_BYTES, aggregateIdProblem } from './aggregate-id';
import { AggregateIdPipe } from './aggregate-id.pipe';

function refusal(pipe: AggregateIdPipe, id: string): unknown {
  try {
    pipe.transform(id);
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('AggregateIdPipe', () => {
  const pipe = new AggregateIdPipe();
  /** 4-byte characters (U+1F600) filling the limit exactly. */
  const fourByteAtLimit = '\u{1F600}'.repeat(AGGREGATE_ID_MAX_BYTES / 4);

  it('passes any Unicode text without controls through unchanged (no normalisation)', () => {
    const ids = [
      'order-1',
      'compte-é-ü-日本',
      'acct/42',
      'acct 42',
      ' leading and trailing ',
      '-leading',
      '\u{1F600}',
      'e\u0301', // NFD: kept as sent, not folded to 'é'
      '\u200d\u2028\ufeff\uffff', // format, separator, BOM, noncharacter: not controls
      fourByteAtLimit,
      'a'.repeat(AGGREGATE_ID_MAX_BYTES),
    ];
    for (const id of ids) expect(pipe.transform(id)).toBe(id);
    expect(Buffer.byteLength(fourByteAtLimit)).toBe(AGGREGATE_ID_MAX_BYTES);
  });

  it('refuses empty, controls, unpaired surrogates and more than the limit in UTF-8 bytes as VALIDATION_FAILED', () => {
    const bad = [
      '',
      'a\u0000b',
      'tab\there',
      'line\nfeed',
      'del\u007f',
      'c1\u0085',
      'c1\u009f',
      'lone\ud800',
      '\udc00trail',
      'a'.repeat(AGGREGATE_ID_MAX_BYTES + 1),
      fourByteAtLimit + 'a',
      'é'.repeat(AGGREGATE_ID_MAX_BYTES / 2 + 1),
    ];
    for (const id of bad) {
      const e = refusal(pipe, id);
      expect(e).toBeInstanceOf(DomainError);
      expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: expect.objectContaining({ field: 'aggregateId' }) });
    }
  });

  it('names the field it was built for and says why', () => {
    expect(refusal(new AggregateIdPipe('id'), 'x\u0001')).toMatchObject({ details: expect.objectContaining({ field: 'id' }) });
    expect(aggregateIdProblem('a'.repeat(AGGREGATE_ID_MAX_BYTES + 1))).toMatch(/at most 256 bytes of UTF-8 \(this one is 257\)/);
    expect(aggregateIdProblem(42)).toBe('must be a string');
  });
});

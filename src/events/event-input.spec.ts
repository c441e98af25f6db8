import { validateDto } from '../common/dto-validation.pipe';
import { parseExactly } from '../common/exact-json';
import { RawJson, stringifyJson } from '../common/raw-json';
import { AppendBatchDto, AppendEventDto } from './event-input.dto';

describe('append bodies with exact numbers', () => {
  it('keeps data and metadata numbers exact and reads envelope numbers as plain values', () => {
    const body = parseExactly('{"aggregateId":"pay-1","eventType":"Paid","expectedVersion":1.0,"data":{"amount":79.90},"metadata":{"rate":1.10}}');
    const dto = validateDto(AppendEventDto, body);
    expect(dto.expectedVersion).toBe(1);
    expect(stringifyJson(dto.data)).toBe('{"amount":79.90}');
    expect(stringifyJson(dto.metadata)).toBe('{"rate":1.10}');
  });

  it('keeps the numbers of every batch element exact', () => {
    const body = parseExactly('{"aggregateId":"pay-1","events":[{"eventType":"A","data":{"n":9007199254740993}},{"eventType":"B","data":{"n":-0}}]}');
    const dto = validateDto(AppendBatchDto, body);
    expect(dto.events.map((e) => stringifyJson(e.data))).toEqual(['{"n":9007199254740993}', '{"n":-0}']);
  });

  it('still refuses an envelope number that is not an integer', () => {
    const body = parseExactly('{"aggregateId":"pay-1","eventType":"Paid","expectedVersion":1.50,"data":{}}');
    expect(() => validateDto(AppendEventDto, body)).toThrow(/expectedVersion/);
  });

  it('passes a bare exact number as data on to the appender, which refuses it (not an object)', () => {
    const dto = validateDto(AppendEventDto, parseExactly('{"aggregateId":"a","eventType":"E","data":1.0}'));
    expect(dto.data).toBeInstanceOf(RawJson);
  });
});

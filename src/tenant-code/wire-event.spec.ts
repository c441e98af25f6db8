import { stringifyJson } from '../common/raw-json';
import { toWireEvent } from './wire-event';

const stored = {
  eventId: 'e1',
  aggregateId: 'a-1',
  aggregateType: 'a',
  eventType: 'T',
  version: 1,
  timestamp: 0,
  // What a double or a parse would change: digits, an exponent past a double, a repeated key, the key order.
  data: '{"price":79.90,"big":9007199254740993,"huge":1e400,"k":1,"k":2,"2":"b","1":"a"}',
  metadata: '{"m":0.10}',
  correlationId: null,
  causationId: null,
};

describe('toWireEvent', () => {
  it('hands the stored JSON text to the host byte-exact, without parsing it', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const request = stringifyJson({ id: 1, type: 'batch', payload: { events: [toWireEvent(stored)] } });
      expect(request).toContain(`"data":${stored.data}`);
      expect(request).toContain(`"metadata":${stored.metadata}`);
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});

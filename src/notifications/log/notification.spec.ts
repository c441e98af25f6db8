import { Notification, streamText } from './notification';

const base: Notification = {
  sequence: 7,
  projectionId: 'p',
  aggregateId: 'cart-1',
  aggregateType: 'cart',
  stateKey: 'cart-1',
  version: 3,
  position: 12,
  state: '{"items":2}',
  timestamp: 0,
};

describe('notification wire shapes', () => {
  it('says deleted: true with state null for a removed key, and nothing new on any other change', () => {
    // streamText is what WebSocket, SSE and webhook bodies send; polling sends notificationView, its fields.
    const removed = JSON.parse(streamText({ ...base, state: 'null' }));
    expect(removed).toMatchObject({ type: 'state_changed', stateKey: 'cart-1', state: null, deleted: true });
    const changed = JSON.parse(streamText({ ...base }));
    expect(changed).toEqual({
      type: 'state_changed',
      sequence: 7,
      projectionId: 'p',
      aggregateId: 'cart-1',
      aggregateType: 'cart',
      stateKey: 'cart-1',
      version: 3,
      state: { items: 2 },
      timestamp: '1970-01-01T00:00:00.000Z',
    });
  });
});

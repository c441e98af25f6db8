import { uuidv7 } from './uuid-v7';

describe('uuidv7', () => {
  it('is a version 7, variant 1 UUID carrying the time', () => {
    const id = uuidv7(1_700_000_000_123);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(1_700_000_000_123);
  });

  it('sorts in creation order within one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

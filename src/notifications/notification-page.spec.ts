import { parseDeliveryFilter, parseNotificationPage } from './notification-page';

const limits = { pageDefault: 100, pageMax: 1000 };

function refusal(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('notification page parameters', () => {
  it('defaults to the start of the log and the configured page', () => {
    expect(parseNotificationPage({}, limits)).toEqual({ afterSequence: 0, limit: 100 });
    expect(parseNotificationPage({ afterSequence: '5', limit: '1000' }, limits)).toEqual({ afterSequence: 5, limit: 1000 });
  });

  it('refuses a bad cursor before a bad limit', () => {
    expect(refusal(() => parseNotificationPage({ afterSequence: '-1', limit: '0' }, limits))).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'afterSequence' },
    });
    expect(refusal(() => parseNotificationPage({ limit: '1001' }, limits))).toMatchObject({ message: 'limit: must be between 1 and 1000' });
  });

  it('checks a delivery status first, and leaves it out when not given', () => {
    expect(parseDeliveryFilter({ status: 'dead', limit: '5' }, limits)).toEqual({ status: 'dead', afterSequence: 0, limit: 5 });
    expect(parseDeliveryFilter({}, limits)).toEqual({ afterSequence: 0, limit: 100 });
    expect(refusal(() => parseDeliveryFilter({ status: 'gone', afterSequence: 'x' }, limits))).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'status: must be one of pending, delivered, dead',
    });
  });
});

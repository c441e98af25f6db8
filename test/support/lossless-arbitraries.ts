import * as fc from 'fast-check';
import { num } from './raw-json';
import { bankAccountModel, Dec, ledgerModel, ModelEvent, ordersModel, ReducerModel } from './reducer-models';

/**
 * Random event sequences that a double would get wrong (decimals with trailing zeros, longs past
 * 2^53, ulongs past 2^63) and random ways to append them. Every sequence is valid for its reducer
 * (no overdraft, no item after shipping), so every path must end in a state, never in an error.
 */

export const MAX_EVENTS = 12;

/** Positive decimals in plain notation; trailing zeros and exact doubles' neighbours are frequent. */
const decimalText = (maxUnscaled: bigint): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom('12.10', '0.10', '100.50', '0.01', '79.90', '9007199254740993.00', '12345678901.2300') },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.bigInt({ min: 1n, max: maxUnscaled }), fc.integer({ min: 0, max: 4 }), fc.boolean())
        .map(([u, scale, zero]) => new Dec(zero ? u * 10n : u, scale).toString()),
    },
  );

/** Longs whose sum over MAX_EVENTS cannot overflow: |x| ≤ 2^59, often just past 2^53. */
const longText = fc
  .oneof(
    fc.constantFrom(9007199254740993n, -9007199254740993n, 9007199254740995n, 2n ** 59n - 1n, -(2n ** 59n), 0n, 123456789012345678n),
    fc.bigInt({ min: -(2n ** 59n), max: 2n ** 59n }),
  )
  .map(String);

const ulongText = fc
  .oneof(fc.constantFrom(18446744073709551615n, 9223372036854775808n, 9007199254740993n, 0n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))
  .map(String);

const sku = fc.constantFrom('a', 'b', 'c', 'd');
const qty = fc.integer({ min: 1, max: 5 });

/** AccountOpened, then deposits and withdrawals; a withdrawal past the balance becomes a deposit. */
const bankEvents: fc.Arbitrary<ModelEvent[]> = fc
  .tuple(
    fc.constantFrom('ada', 'bo', 'cy'),
    fc.array(fc.tuple(fc.boolean(), decimalText(10n ** 15n)), { minLength: 0, maxLength: MAX_EVENTS - 1 }),
  )
  .map(([owner, ops]) => {
    let balance = Dec.ZERO;
    const events: ModelEvent[] = [{ eventType: 'AccountOpened', data: { owner } }];
    for (const [withdraw, amount] of ops) {
      const a = Dec.parse(amount);
      const out = withdraw && a.compare(balance) <= 0;
      balance = out ? balance.minus(a) : balance.plus(a);
      events.push({ eventType: out ? 'MoneyWithdrawn' : 'MoneyDeposited', data: { amount: num(amount) } });
    }
    return events;
  });

const line = fc.record({ sku, qty, price: decimalText(10n ** 9n) });

/** OrderPlaced (duplicate SKUs merged), items, and maybe OrderShipped last. */
const orderEvents: fc.Arbitrary<ModelEvent[]> = fc
  .tuple(
    fc.constantFrom('cust-1', 'cust-2'),
    fc.array(line, { minLength: 1, maxLength: 3 }),
    fc.array(line, { minLength: 0, maxLength: MAX_EVENTS - 2 }),
    fc.boolean(),
  )
  .map(([customerId, lines, items, shipped]) => [
    { eventType: 'OrderPlaced', data: { customerId, lines: lines.map((l) => ({ sku: l.sku, qty: l.qty, price: num(l.price) })) } },
    ...items.map((l) => ({ eventType: 'ItemAdded', data: { sku: l.sku, qty: l.qty, price: num(l.price) } })),
    ...(shipped ? [{ eventType: 'OrderShipped', data: { trackingNumber: 'TRK-1' } }] : []),
  ]);

const ledgerEvents: fc.Arbitrary<ModelEvent[]> = fc
  .array(
    fc.record({
      amount: decimalText(10n ** 15n),
      ref: longText,
      big: ulongText,
      bucket: fc.constantFrom('b1', 'b0', 'z', 'a'),
      tag: fc.constantFrom('t', 'u', 'v'),
    }),
    { minLength: 1, maxLength: MAX_EVENTS },
  )
  .map((posts) =>
    posts.map((p, i) => ({
      eventType: 'Posted',
      data: { id: `p${i + 1}`, amount: num(p.amount), ref: num(p.ref), big: num(p.big), bucket: p.bucket, tag: p.tag },
    })),
  );

/** One sequence and how to append it: batch boundaries, and how many events go before the restart. */
export interface Case {
  events: ModelEvent[];
  /** Sizes of consecutive batches, summing to events.length. */
  batches: number[];
  /** Events appended before the service restarts (the rest after it). */
  beforeRestart: number;
}

const withSplits = (events: fc.Arbitrary<ModelEvent[]>): fc.Arbitrary<Case> =>
  events.chain((evs) =>
    fc
      .tuple(
        fc.array(fc.boolean(), { minLength: evs.length - 1, maxLength: evs.length - 1 }),
        fc.integer({ min: Math.min(1, evs.length - 1), max: Math.max(0, evs.length - 1) }),
      )
      .map(([cuts, beforeRestart]) => {
        const batches: number[] = [];
        let size = 1;
        for (const cut of cuts) {
          if (cut) {
            batches.push(size);
            size = 0;
          }
          size++;
        }
        batches.push(size);
        return { events: evs, batches, beforeRestart };
      }),
  );

export interface ReducerUnderTest {
  /** Aggregate ids start with `${type}-`, so the type is inferred. */
  type: string;
  reducerId: string;
  className: string;
  model: ReducerModel;
  cases: fc.Arbitrary<Case>;
}

export const REDUCERS: ReducerUnderTest[] = [
  { type: 'account', reducerId: 'bank', className: 'BankAccount.AccountReducer', model: bankAccountModel, cases: withSplits(bankEvents) },
  { type: 'order', reducerId: 'orders', className: 'Orders.OrderReducer', model: ordersModel, cases: withSplits(orderEvents) },
  { type: 'ledger', reducerId: 'ledger', className: 'Lossless.LedgerReducer', model: ledgerModel, cases: withSplits(ledgerEvents) },
];

/** One case per reducer for one run of the property. */
export const runCases: fc.Arbitrary<Case[]> = fc.tuple(...REDUCERS.map((r) => r.cases));

import { LosslessNumber } from 'lossless-json';
import { jsonText, num } from './raw-json';

/**
 * The states the C# reducers must produce, computed here with exact arithmetic and written as the
 * JSON text System.Text.Json writes (web defaults: camelCase, declaration order, `decimal` with its
 * scale). A test that only compared delivery paths with each other would pass if every path lost
 * the same digits; comparing each with these texts shows the digits are right, too.
 */

/** A .NET `decimal` as unscaled integer and scale: `12.10` is (1210, 2); sums keep the larger scale. */
export class Dec {
  constructor(
    readonly unscaled: bigint,
    readonly scale: number,
  ) {}

  static readonly ZERO = new Dec(0n, 0);

  /** Plain notation only (`-12.10`), as the generators write it. */
  static parse(text: string): Dec {
    const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
    if (!m) throw new Error(`not a plain decimal: ${text}`);
    const digits = BigInt(m[2] + (m[3] ?? ''));
    return new Dec(m[1] ? -digits : digits, m[3]?.length ?? 0);
  }

  private at(scale: number): bigint {
    return this.unscaled * 10n ** BigInt(scale - this.scale);
  }

  plus(o: Dec): Dec {
    const s = Math.max(this.scale, o.scale);
    return new Dec(this.at(s) + o.at(s), s);
  }

  minus(o: Dec): Dec {
    const s = Math.max(this.scale, o.scale);
    return new Dec(this.at(s) - o.at(s), s);
  }

  /** Times an `int` (scale 0): the scale stays. */
  times(n: number): Dec {
    return new Dec(this.unscaled * BigInt(n), this.scale);
  }

  compare(o: Dec): number {
    const s = Math.max(this.scale, o.scale);
    const d = this.at(s) - o.at(s);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }

  toString(): string {
    const neg = this.unscaled < 0n;
    const digits = (neg ? -this.unscaled : this.unscaled).toString().padStart(this.scale + 1, '0');
    const int = digits.slice(0, digits.length - this.scale);
    const frac = this.scale ? '.' + digits.slice(digits.length - this.scale) : '';
    return (neg ? '-' : '') + int + frac;
  }

  json(): LosslessNumber {
    return num(this.toString());
  }
}

/** One event as the tests append it: numbers in `data` are `num(...)` values (exact text). */
export interface ModelEvent {
  eventType: string;
  data: Record<string, unknown>;
}

const text = (v: unknown): string => (v instanceof LosslessNumber ? v.value : String(v));
const dec = (v: unknown): Dec => Dec.parse(text(v));
const int = (v: unknown): number => Number(text(v));
const long = (v: unknown): bigint => BigInt(text(v));

/** A model: the JSON text of the state after each event. */
export type ReducerModel = (events: ModelEvent[]) => string[];

/** examples/bank-account (AccountReducer); the generators never make it throw. */
export const bankAccountModel: ReducerModel = (events) => {
  let owner = '';
  let balance = Dec.ZERO;
  let transactions = 0;
  return events.map((e) => {
    if (e.eventType === 'AccountOpened') owner = String(e.data.owner);
    else if (e.eventType === 'MoneyDeposited') {
      balance = balance.plus(dec(e.data.amount));
      transactions++;
    } else if (e.eventType === 'MoneyWithdrawn') {
      balance = balance.minus(dec(e.data.amount));
      transactions++;
    }
    return jsonText({ owner, balance: balance.json(), transactions });
  });
};

interface Line {
  sku: string;
  qty: number;
  price: Dec;
}

/** examples/orders (OrderReducer, immutable records with computed total, itemCount, skus). */
export const ordersModel: ReducerModel = (events) => {
  let s = {
    customerId: '',
    status: 'None',
    lines: [] as Line[],
    cancelReason: null as string | null,
    trackingNumber: null as string | null,
  };
  return events.map((e) => {
    const d = e.data;
    if (e.eventType === 'OrderPlaced') {
      const lines: Line[] = [];
      for (const l of d.lines as Record<string, unknown>[]) {
        const same = lines.find((x) => x.sku === l.sku); // GroupBy: first price, quantities summed
        if (same) same.qty += int(l.qty);
        else lines.push({ sku: String(l.sku), qty: int(l.qty), price: dec(l.price) });
      }
      s = { customerId: String(d.customerId), status: 'Placed', lines, cancelReason: null, trackingNumber: null };
    } else if (e.eventType === 'ItemAdded') {
      const i = s.lines.findIndex((x) => x.sku === d.sku);
      const lines = s.lines.slice();
      if (i < 0) lines.push({ sku: String(d.sku), qty: int(d.qty), price: dec(d.price) });
      else lines[i] = { ...lines[i], qty: lines[i].qty + int(d.qty) };
      s = { ...s, lines };
    } else if (e.eventType === 'OrderShipped') {
      s = { ...s, status: 'Shipped', trackingNumber: String(d.trackingNumber) };
    }
    const total = s.lines.reduce((sum, l) => sum.plus(l.price.times(l.qty)), Dec.ZERO);
    return jsonText({
      customerId: s.customerId,
      status: s.status,
      lines: s.lines.map((l) => ({ sku: l.sku, qty: l.qty, price: l.price.json(), total: l.price.times(l.qty).json() })),
      total: total.json(),
      itemCount: s.lines.reduce((n, l) => n + l.qty, 0),
      cancelReason: s.cancelReason,
      trackingNumber: s.trackingNumber,
      skus: [...new Set(s.lines.map((l) => l.sku))].sort(),
    });
  });
};

/** test/fixtures/lossless/Ledger.cs (LedgerFold): decimal, long and ulong in a list and nested dictionaries. */
export const ledgerModel: ReducerModel = (events) => {
  let total = Dec.ZERO;
  let refSum = 0n;
  let maxBig = 0n;
  let count = 0;
  const entries: { id: string; amount: Dec; ref: bigint }[] = [];
  type Bucket = { sum: Dec; count: number; byTag: Map<string, Dec>; refs: bigint[] };
  const buckets = new Map<string, Bucket>();
  return events.map((e) => {
    if (e.eventType === 'Posted') {
      const d = e.data;
      const amount = dec(d.amount);
      const ref = long(d.ref);
      total = total.plus(amount);
      refSum = BigInt.asIntN(64, refSum + ref); // C# long arithmetic is unchecked
      if (long(d.big) > maxBig) maxBig = long(d.big);
      count++;
      entries.push({ id: String(d.id), amount, ref });
      const name = String(d.bucket);
      const b: Bucket = buckets.get(name) ?? { sum: Dec.ZERO, count: 0, byTag: new Map(), refs: [] };
      buckets.set(name, b);
      b.sum = b.sum.plus(amount);
      b.count++;
      const tag = String(d.tag);
      b.byTag.set(tag, b.byTag.has(tag) ? b.byTag.get(tag)!.plus(amount) : amount);
      b.refs.push(ref);
    }
    // Map → object keeps insertion order here because bucket and tag names are never integer-like.
    const bucketsJson = Object.fromEntries(
      [...buckets].map(([k, b]) => [
        k,
        {
          sum: b.sum.json(),
          count: b.count,
          byTag: Object.fromEntries([...b.byTag].map(([t, v]) => [t, v.json()])),
          refs: b.refs.map((r) => num(String(r))),
        },
      ]),
    );
    return jsonText({
      total: total.json(),
      refSum: num(String(refSum)),
      maxBig: num(String(maxBig)),
      count,
      entries: entries.map((x) => ({ id: x.id, amount: x.amount.json(), ref: num(String(x.ref)) })),
      buckets: bucketsJson,
    });
  });
};

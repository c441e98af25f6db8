import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { realPool, wireEvent } from '../support/runtime-harness';

/**
 * Issue 27 item 5 (no false refusals), end to end through the sandboxed executor: ordinary code the verifier used to
 * refuse — new T() under `where T : new()`, static readonly Regex / FrozenDictionary / ImmutableArray fields,
 * SHA256.HashData — compiles with the production compiler and runs in a real executor, with the same results on every
 * call (nothing carried from one call to the next). The corpus cases showing each is safe are in runtime/escape-corpus/
 * (run by runtime/EventSourcing.Runtime.Tests/EscapeCorpusTests.cs).
 */
jest.setTimeout(120_000);

const SOURCE = `using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Ordinary
{
    public sealed class Summary { public int Count { get; set; } public string Hash { get; set; } = ""; public int Price { get; set; } public string Sku { get; set; } = ""; }
    public sealed class Line { public int Qty { get; set; } = 1; }

    internal static class Catalog
    {
        public static readonly Regex Sku = new("^[A-Z]{3}-[0-9]+$");
        public static readonly FrozenDictionary<string, int> Prices = new Dictionary<string, int> { ["ABC-1"] = 5 }.ToFrozenDictionary(StringComparer.Ordinal);
        public static readonly ImmutableArray<string> Kinds = ["Sold"];
        public static T Fresh<T>() where T : new() => new T();
    }

    public sealed class SummaryReducer : IReducer<Summary>
    {
        public Summary Apply(Summary state, Event e)
        {
            var sku = e.Data.GetProperty("sku").GetString() ?? "";
            if (!Catalog.Kinds.Contains(e.EventType) || !Catalog.Sku.IsMatch(sku)) return state;
            state.Count += Catalog.Fresh<Line>().Qty;
            state.Price += Catalog.Prices.GetValueOrDefault(sku);
            state.Sku = sku;
            state.Hash = Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(sku)));
            return state;
        }
    }
}
`;

let pool: RuntimePool;
let assemblies: Map<string, Buffer>;

beforeAll(() => {
  const r = realPool({ callDeadlineMs: 10_000 });
  pool = r.pool;
  assemblies = r.assemblies;
});
afterAll(() => pool?.close());

it('compiles and runs new T(), static readonly Regex/FrozenDictionary/ImmutableArray and SHA256.HashData in the sandboxed executor', async () => {
  const compiled = await pool.compile([{ path: 'Ordinary.cs', content: SOURCE }], 'reducer');
  if (!compiled.ok) throw new Error(compiled.compilationError);
  assemblies.set('tenant-a/ordinary', Buffer.from(compiled.assembly, 'base64'));

  const events = [
    wireEvent('sale-1', 'Sold', { sku: 'ABC-1' }),
    wireEvent('sale-1', 'Sold', { sku: 'bad' }),
    wireEvent('sale-1', 'Sold', { sku: 'ABC-1' }),
  ];
  const first = await pool.apply('tenant-a', 'ordinary', 'Ordinary.SummaryReducer', [{ state: null, events }]);
  const again = await pool.apply('tenant-a', 'ordinary', 'Ordinary.SummaryReducer', [{ state: null, events }]);
  expect(first[0].ok).toBe(true);
  const states = first[0].states.map((s) => JSON.parse(s));
  expect(states.map((s) => [s.count, s.price])).toEqual([
    [1, 5],
    [1, 5],
    [2, 10],
  ]);
  // SHA-256 of "ABC-1", computed independently in Node.
  const { createHash } = await import('node:crypto');
  expect(states[2].hash).toBe(createHash('sha256').update('ABC-1').digest('hex').toUpperCase());
  // A second call starts from the same nothing: no state carried across calls.
  expect(again[0].states).toEqual(first[0].states);
});

const GENERATED = `using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.RegularExpressions;
using EventSourcing;

namespace Generated
{
    public sealed class Summary { public int Units { get; set; } public string Last { get; set; } = ""; public string Echo { get; set; } = ""; }
    public sealed class Line { public string Sku { get; set; } = ""; public int Qty { get; set; } }

    [JsonSerializable(typeof(Line))]
    [JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)]
    internal partial class LineContext : JsonSerializerContext { }

    internal static partial class Catalog
    {
        [GeneratedRegex("^SKU-([0-9]+)$", RegexOptions.IgnoreCase)]
        public static partial Regex Sku();

        public static readonly JsonSerializerOptions Web = new(JsonSerializerDefaults.Web) { WriteIndented = false };
    }

    public sealed class SummaryReducer : IReducer<Summary>
    {
        public Summary Apply(Summary state, Event e)
        {
            if (e.EventType == "Tamper") Catalog.Web.WriteIndented = true; // read-only since load: throws
            var line = JsonSerializer.Deserialize(e.Data.GetRawText(), LineContext.Default.Line)!;
            var m = Catalog.Sku().Match(line.Sku);
            if (m.Success) state.Units += int.Parse(m.Groups[1].Value) * line.Qty;
            state.Last = JsonSerializer.Serialize(line, LineContext.Default.Line);
            state.Echo = JsonSerializer.Serialize(new { line.Sku }, Catalog.Web);
            return state;
        }
    }
}
`;

it('compiles and runs the Regex and System.Text.Json source generators and static readonly JsonSerializerOptions in the sandboxed executor', async () => {
  const compiled = await pool.compile([{ path: 'Generated.cs', content: GENERATED }], 'reducer');
  if (!compiled.ok) throw new Error(compiled.compilationError);
  assemblies.set('tenant-a/generated', Buffer.from(compiled.assembly, 'base64'));

  const events = [wireEvent('cart-1', 'Added', { sku: 'sku-7', qty: 2 }), wireEvent('cart-1', 'Added', { sku: 'x', qty: 5 })];
  const first = await pool.apply('tenant-a', 'generated', 'Generated.SummaryReducer', [{ state: null, events }]);
  expect(first[0].ok).toBe(true);
  const states = first[0].states.map((s) => JSON.parse(s));
  expect(states.map((s) => s.units)).toEqual([14, 14]);
  expect(states[1].last).toBe('{"sku":"x","qty":5}');
  expect(states[1].echo).toBe('{"sku":"x"}');

  // The static options cannot be changed by a call (the host froze them at load), so the next call sees what the first saw.
  const tampered = await pool.apply('tenant-a', 'generated', 'Generated.SummaryReducer', [
    { state: null, events: [wireEvent('cart-1', 'Tamper', { sku: 'sku-1', qty: 1 })] },
  ]);
  expect(tampered[0].ok).toBe(false);
  const again = await pool.apply('tenant-a', 'generated', 'Generated.SummaryReducer', [{ state: null, events }]);
  expect(again[0].states).toEqual(first[0].states);
});

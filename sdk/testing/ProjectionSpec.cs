using System;
using System.Collections.Generic;
using System.Linq;

namespace EventSourcing.Testing
{
    /// <summary>Given/when/then for a projection, run as the host runs it: each batch's keys resolved by a new
    /// instance, each key's events of the batch folded in order by another new instance, states kept as JSON between
    /// batches.
    /// <code>
    /// ProjectionSpec&lt;CustomerTotals, Totals&gt;.Given(a, b).When(c).Then("customer-1", s => Assert.Equal(3, s.Orders));
    /// </code></summary>
    public sealed class ProjectionSpec<TProjection, TState>
        where TProjection : IProjection<TState>, new()
        where TState : new()
    {
        readonly List<IReadOnlyList<Event>> _batches = new();

        // The server's allowlist check first (once per assembly): a spec fails where an upload would be refused.
        ProjectionSpec() => AllowlistCheck.Ensure(typeof(TProjection).Assembly);

        /// <summary>A spec whose history is <paramref name="events"/> (one batch).</summary>
        public static ProjectionSpec<TProjection, TState> Given(params Event[] events) => new ProjectionSpec<TProjection, TState>().When(events);

        /// <summary>A spec whose history is <paramref name="events"/> (one batch).</summary>
        public static ProjectionSpec<TProjection, TState> Given(IEnumerable<Event> events) => Given(events.ToArray());

        /// <summary>More events, as a later batch.</summary>
        public ProjectionSpec<TProjection, TState> When(params Event[] events)
        {
            _batches.Add(events);
            return this;
        }

        /// <summary>Runs the spec and returns each key's stored JSON.</summary>
        public IReadOnlyDictionary<string, string> ThenJson()
        {
            var fold = new HostFold<TState>();
            var states = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (var batch in _batches)
            {
                var resolver = new TProjection();
                var groups = new List<(string Key, List<Event> Events)>();
                foreach (var e in batch)
                {
                    string? key;
                    try
                    {
                        key = resolver.ResolveKey(e);
                    }
                    catch (Exception ex)
                    {
                        throw new ApplyFailedException("RESOLVE_FAILED", e, ex);
                    }
                    if (key is null) continue;
                    var group = groups.FirstOrDefault(g => g.Key == key);
                    if (group.Events is null) groups.Add((key, new List<Event> { e }));
                    else group.Events.Add(e);
                }
                foreach (var (key, events) in groups)
                {
                    var projection = new TProjection();
                    states.TryGetValue(key, out var json);
                    states[key] = fold.Fold(json, events, projection.Apply)!;
                }
            }
            return states;
        }

        /// <summary>Runs the spec and returns each key's state, as read back from its stored JSON.</summary>
        public IReadOnlyDictionary<string, TState> Then()
        {
            var fold = new HostFold<TState>();
            return ThenJson().ToDictionary(kv => kv.Key, kv => fold.Read(kv.Value), StringComparer.Ordinal);
        }

        /// <summary>Runs the spec and hands the state of <paramref name="key"/> to <paramref name="assert"/>; fails when
        /// no event resolved to that key.</summary>
        public TState Then(string key, Action<TState>? assert = null)
        {
            var states = Then();
            if (!states.TryGetValue(key, out var state))
                throw new KeyNotFoundException($"no event resolved to key '{key}' (keys: {string.Join(", ", states.Keys)})");
            assert?.Invoke(state);
            return state;
        }
    }
}

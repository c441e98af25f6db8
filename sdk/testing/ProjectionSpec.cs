using System;
using System.Collections.Generic;
using System.Linq;

namespace EventSourcing.Testing
{
    /// <summary>Given/when/then for a projection, run as the service runs it: each batch's keys resolved by a new
    /// instance (<see cref="IResolveKeys{TState}"/>: every key of an event, each applied with its own key), keys the
    /// service would refuse held in <c>!unresolved</c> (<see cref="ThenUnresolved"/>), the tenant's
    /// <c>keysPerProjection</c> limit when given (<see cref="WithKeyLimit"/>), each key's events of the batch folded in
    /// order by another new instance, a key removed by an <see cref="IDeletableProjection{TState}"/>
    /// (<see cref="ThenDeleted"/>), states kept as JSON between batches.
    /// <code>
    /// ProjectionSpec&lt;CustomerTotals, Totals&gt;.Given(a, b).When(c).Then("customer-1", s => Assert.Equal(3, s.Orders));
    /// ProjectionSpec&lt;OpenCarts, Cart&gt;.Given(opened, checkedOut).ThenDeleted("cart-1");
    /// </code></summary>
    public sealed class ProjectionSpec<TProjection, TState>
        where TProjection : IProjection<TState>, new()
        where TState : new()
    {
        readonly List<IReadOnlyList<Event>> _batches = new();
        int _keyLimit;

        // The server's allowlist check first (once per assembly): a spec fails where an upload would be refused.
        ProjectionSpec() => AllowlistCheck.Ensure(typeof(TProjection).Assembly);

        /// <summary>A spec whose history is <paramref name="events"/> (one batch).</summary>
        public static ProjectionSpec<TProjection, TState> Given(params Event[] events) => new ProjectionSpec<TProjection, TState>().When(events);

        /// <summary>A spec whose history is <paramref name="events"/> (one batch).</summary>
        public static ProjectionSpec<TProjection, TState> Given(IEnumerable<Event> events) => Given(events.ToArray());

        /// <summary>More events, as a later batch. The key limit is judged when a batch is routed, before it is
        /// applied: a key removed in a batch frees its place from the next batch on.</summary>
        public ProjectionSpec<TProjection, TState> When(params Event[] events)
        {
            _batches.Add(events);
            return this;
        }

        /// <summary>The tenant's <c>keysPerProjection</c> (0: none, the default): an event that would make a new key
        /// past it is held in <c>!unresolved</c> with <c>KEY_LIMIT</c>; a removed key no longer counts.</summary>
        public ProjectionSpec<TProjection, TState> WithKeyLimit(int keysPerProjection)
        {
            if (keysPerProjection < 0) throw new ArgumentOutOfRangeException(nameof(keysPerProjection));
            _keyLimit = keysPerProjection;
            return this;
        }

        /// <summary>Runs the spec and returns each key's stored JSON (a removed key has none).</summary>
        public IReadOnlyDictionary<string, string> ThenJson() => Run().States;

        /// <summary>Runs the spec and returns each key's state, as read back from its stored JSON.</summary>
        public IReadOnlyDictionary<string, TState> Then()
        {
            var fold = new HostFold<TState>();
            return ThenJson().ToDictionary(kv => kv.Key, kv => fold.Read(kv.Value), StringComparer.Ordinal);
        }

        /// <summary>Runs the spec and hands the state of <paramref name="key"/> to <paramref name="assert"/>; fails when
        /// the key has no state (no event resolved to it, it was removed, or its events were held).</summary>
        public TState Then(string key, Action<TState>? assert = null)
        {
            var run = Run();
            if (!run.States.TryGetValue(key, out var json))
                throw new KeyNotFoundException(
                    (run.Deleted.Contains(key) ? $"the state of key '{key}' was removed" : $"no event resolved to key '{key}'")
                    + $" (keys: {string.Join(", ", run.States.Keys)})" + Held(run));
            var state = new HostFold<TState>().Read(json);
            assert?.Invoke(state);
            return state;
        }

        /// <summary>Runs the spec and fails unless the state of <paramref name="key"/> was removed (and not made again
        /// by a later event): its read would answer 404 and its last notification says <c>deleted: true</c>.</summary>
        public void ThenDeleted(string key)
        {
            var run = Run();
            if (run.Deleted.Contains(key)) return;
            throw new InvalidOperationException(
                run.States.ContainsKey(key)
                    ? $"key '{key}' has a state: {run.States[key]}"
                    : $"no event resolved to key '{key}', so nothing was removed" + Held(run));
        }

        /// <summary>Runs the spec and returns the events the service would hold in <c>!unresolved</c>, in order.</summary>
        public IReadOnlyList<UnresolvedEvent> ThenUnresolved() => Run().Unresolved;

        static string Held(RunResult run) =>
            run.Unresolved.Count == 0 ? "" : "; held in !unresolved: " + string.Join("; ", run.Unresolved.Select(u => u.ToString()));

        sealed record RunResult(Dictionary<string, string> States, HashSet<string> Deleted, List<UnresolvedEvent> Unresolved);

        RunResult Run()
        {
            var fold = new HostFold<TState>();
            var states = new Dictionary<string, string>(StringComparer.Ordinal);
            var deleted = new HashSet<string>(StringComparer.Ordinal);
            var unresolved = new List<UnresolvedEvent>();
            foreach (var batch in _batches)
            {
                var groups = Route(batch, states, unresolved);
                foreach (var (key, events) in groups)
                {
                    var projection = new TProjection();
                    Func<TState, Event, TState> apply = projection is IResolveKeys<TState> keyed ? (s, e) => keyed.Apply(key, s, e) : projection.Apply;
                    Func<TState, Event, bool>? shouldDelete = projection is IDeletableProjection<TState> d ? d.ShouldDelete : null;
                    states.TryGetValue(key, out var json);
                    var after = fold.Fold(json, events, apply, shouldDelete);
                    if (after is null)
                    {
                        states.Remove(key);
                        deleted.Add(key);
                    }
                    else
                    {
                        states[key] = after;
                        deleted.Remove(key);
                    }
                }
            }
            return new RunResult(states, deleted, unresolved);
        }

        /// <summary>One batch routed: each event's keys, the key rule and the key limit; its events grouped by key in order.</summary>
        List<(string Key, List<Event> Events)> Route(IReadOnlyList<Event> batch, Dictionary<string, string> states, List<UnresolvedEvent> unresolved)
        {
            var resolver = new TProjection();
            var groups = new List<(string Key, List<Event> Events)>();
            // Counted as the service counts: keys with a state, and keys given events (not yet applied).
            var counted = new HashSet<string>(states.Keys, StringComparer.Ordinal);
            foreach (var e in batch)
            {
                List<string> keys;
                try
                {
                    if (resolver is IResolveKeys<TState> multi) keys = StateKeyRule.Distinct(multi.ResolveKeys(e));
                    else keys = resolver.ResolveKey(e) is { } one ? [one] : [];
                }
                catch (Exception ex)
                {
                    unresolved.Add(new UnresolvedEvent(e, "RESOLVE_FAILED", $"{ex.GetType().FullName}: {ex.Message}"));
                    continue;
                }
                if (keys.Select(StateKeyRule.Problem).FirstOrDefault(p => p is not null) is { } problem)
                {
                    // One refused key holds the whole event.
                    unresolved.Add(new UnresolvedEvent(e, problem.Code, problem.Message));
                    continue;
                }
                var fresh = keys.Where(k => !counted.Contains(k)).ToList();
                if (_keyLimit > 0 && counted.Count + fresh.Count > _keyLimit)
                {
                    unresolved.Add(new UnresolvedEvent(e, "KEY_LIMIT",
                        $"the projection already has {_keyLimit} state keys, its tenant's keysPerProjection limit"));
                    continue;
                }
                foreach (var key in keys)
                {
                    counted.Add(key);
                    var group = groups.FirstOrDefault(g => g.Key == key);
                    if (group.Events is null) groups.Add((key, new List<Event> { e }));
                    else group.Events.Add(e);
                }
            }
            return groups;
        }
    }
}

using System;
using System.Collections.Generic;
using System.Linq;

namespace EventSourcing.Testing
{
    /// <summary>Given/when/then for a reducer, run as the host runs it: each <c>Given</c> and the
    /// <c>When</c> is one batch (a new reducer instance, the state read back from JSON in between), so a state
    /// that does not survive serialization fails here as it would on the server.
    /// <code>
    /// ReducerSpec&lt;AccountReducer, Account&gt;.Given(opened).When(deposited).Then(s => Assert.Equal(50m, s.Balance));
    /// </code></summary>
    public sealed class ReducerSpec<TReducer, TState>
        where TReducer : IReducer<TState>, new()
        where TState : new()
    {
        readonly List<IReadOnlyList<Event>> _given = new();
        IReadOnlyList<Event> _when = Array.Empty<Event>();

        // The server's allowlist check first (once per assembly): a spec fails where an upload would be refused.
        ReducerSpec() => AllowlistCheck.Ensure(typeof(TReducer).Assembly);

        /// <summary>A spec whose history is <paramref name="events"/> (one batch).</summary>
        public static ReducerSpec<TReducer, TState> Given(params Event[] events) => new ReducerSpec<TReducer, TState>().AndGiven(events);

        /// <summary>A spec whose history is <paramref name="events"/> (one batch).</summary>
        public static ReducerSpec<TReducer, TState> Given(IEnumerable<Event> events) => new ReducerSpec<TReducer, TState>().AndGiven(events.ToArray());

        /// <summary>More history, as a later batch.</summary>
        public ReducerSpec<TReducer, TState> AndGiven(params Event[] events)
        {
            _given.Add(events);
            return this;
        }

        /// <summary>The events under test (one batch after the history).</summary>
        public ReducerSpec<TReducer, TState> When(params Event[] events)
        {
            _when = events;
            return this;
        }

        /// <summary>Runs the spec and hands the resulting state, as read back from its stored JSON, to <paramref name="assert"/>.</summary>
        public TState Then(Action<TState>? assert = null)
        {
            var fold = new HostFold<TState>();
            var json = Run(fold);
            var state = fold.Read(json);
            assert?.Invoke(state);
            return state;
        }

        /// <summary>The stored JSON of the resulting state (camelCase, as the service answers it).</summary>
        public string? ThenJson() => Run(new HostFold<TState>());

        /// <summary>Runs the spec expecting the <see cref="When"/> events to fail with <typeparamref name="TException"/>
        /// thrown by the reducer; returns it. The history must apply cleanly.</summary>
        public TException ThenFails<TException>() where TException : Exception
        {
            var fold = new HostFold<TState>();
            string? json = null;
            foreach (var batch in _given) json = fold.Fold(json, batch, Apply);
            try
            {
                fold.Fold(json, _when, Apply);
            }
            catch (ApplyFailedException ex) when (ex.InnerException is TException expected)
            {
                return expected;
            }
            throw new InvalidOperationException($"expected the events under test to fail with {typeof(TException).FullName}, but they applied");
        }

        string? Run(HostFold<TState> fold)
        {
            string? json = null;
            foreach (var batch in _given) json = fold.Fold(json, batch, Apply);
            return fold.Fold(json, _when, Apply);
        }

        // A new instance per batch, as the host makes one per group.
        static Func<TState, Event, TState> Apply
        {
            get
            {
                var reducer = new TReducer();
                return reducer.Apply;
            }
        }
    }
}

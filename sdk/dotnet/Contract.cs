using System;
using System.Collections.Generic;

namespace EventSourcing
{
    /// <summary>
    /// Folds the events of one aggregate into a state.
    /// The aggregate type the reducer handles comes from <see cref="AggregateTypeAttribute"/>,
    /// or, without it, from the class name less a <c>Reducer</c> suffix, lower-cased
    /// (<c>AccountReducer</c> → <c>account</c>).
    /// </summary>
    /// <typeparam name="TState">The state; the first event of an aggregate is applied to <c>new TState()</c>.</typeparam>
    public interface IReducer<TState> where TState : new()
    {
        /// <summary>Returns the state after <paramref name="e"/>. May mutate and return <paramref name="state"/>, or return a new value.</summary>
        TState Apply(TState state, Event e);
    }

    /// <summary>
    /// Folds events from any aggregates into states kept under keys the projection resolves itself.
    /// Its name comes from <see cref="ProjectionNameAttribute"/>, or, without it, the class name.
    /// </summary>
    public interface IProjection<TState> where TState : new()
    {
        /// <summary>The key whose state <paramref name="e"/> updates, or <c>null</c> when the event is not this projection's.</summary>
        string? ResolveKey(Event e);

        /// <summary>Returns the state of the key after <paramref name="e"/>. The first event of a key is applied to <c>new TState()</c>.</summary>
        TState Apply(TState state, Event e);
    }

    /// <summary>
    /// Opt-in for a projection whose events may update several keys (one <c>OrderPlaced</c> → one key per SKU).
    /// When an <see cref="IProjection{TState}"/> also implements it, its <see cref="ResolveKeys"/> is called instead of
    /// <see cref="IProjection{TState}.ResolveKey"/> (which may then simply return <c>null</c>), the event goes to each
    /// key's lane, in log order, and each lane calls <see cref="Apply(string, TState, Event)"/> with its own key
    /// (the one-key <see cref="IProjection{TState}.Apply"/> is then not called by lanes). Projections without it are unchanged.
    /// </summary>
    /// <typeparam name="TState">The projection's state (the same as its <see cref="IProjection{TState}"/>'s).</typeparam>
    public interface IResolveKeys<TState> where TState : new()
    {
        /// <summary>
        /// The keys whose states <paramref name="e"/> updates (duplicates count once; at most 1,024), or <c>null</c> or
        /// empty when the event is not this projection's. Each key follows the rule of a single key (at most 1,024
        /// bytes, not <c>!unresolved</c>); one refused key holds the whole event in the projection's <c>!unresolved</c> lane.
        /// </summary>
        IReadOnlyList<string>? ResolveKeys(Event e);

        /// <summary>Returns the state of <paramref name="key"/> after <paramref name="e"/> (the first event of a key is applied to <c>new TState()</c>).</summary>
        TState Apply(string key, TState state, Event e);
    }

    /// <summary>
    /// Opt-in for a projection that may remove a key's state (a checked-out cart, a closed ticket). When an
    /// <see cref="IProjection{TState}"/> also implements it, <see cref="ShouldDelete"/> is asked after each
    /// <c>Apply</c> with the state it returned; <c>true</c> removes the key's state: its read answers 404, its
    /// notification carries <c>"state": null, "deleted": true</c>, it no longer counts against the tenant's
    /// <c>keysPerProjection</c>, and a later event of that key starts again from <c>new TState()</c>.
    /// Projections without it are unchanged (an <c>Apply</c> returning <c>null</c> still fails the event).
    /// </summary>
    /// <typeparam name="TState">The projection's state (the same as its <see cref="IProjection{TState}"/>'s).</typeparam>
    public interface IDeletableProjection<TState> where TState : new()
    {
        /// <summary>Whether the key's state is removed after <paramref name="e"/>; <paramref name="state"/> is what
        /// <c>Apply</c> returned for it (for an <see cref="IResolveKeys{TState}"/> projection, the lane's own key's).</summary>
        bool ShouldDelete(TState state, Event e);
    }

    /// <summary>Names the aggregate type a reducer handles, e.g. <c>[AggregateType("account")]</c>.</summary>
    [AttributeUsage(AttributeTargets.Class, AllowMultiple = false, Inherited = false)]
    public sealed class AggregateTypeAttribute : Attribute
    {
        /// <summary>Creates the attribute.</summary>
        public AggregateTypeAttribute(string name) => Name = name;

        /// <summary>The aggregate type.</summary>
        public string Name { get; }
    }

    /// <summary>Names a projection, e.g. <c>[ProjectionName("customer-totals")]</c>. Without it the class name is used.</summary>
    [AttributeUsage(AttributeTargets.Class, AllowMultiple = false, Inherited = false)]
    public sealed class ProjectionNameAttribute : Attribute
    {
        /// <summary>Creates the attribute.</summary>
        public ProjectionNameAttribute(string name) => Name = name;

        /// <summary>The projection name.</summary>
        public string Name { get; }
    }
}

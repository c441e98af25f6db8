using System.Text.Json;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Execution;

public sealed class ReducerRunner<TReducer, TState> : RunnerBase<TState>, IRunner
    where TReducer : IReducer<TState>, new()
    where TState : new()
{
    public ReducerRunner(JsonSerializerOptions options) : base(options)
    {
    }

    public Type ImplementationType => typeof(TReducer);
    public bool CanResolveKeys => false;

    protected override object NewInstance() => new TReducer();

    protected override TState ApplyOne(object instance, TState state, Event e, string? key) => ((TReducer)instance).Apply(state, e);

    public void ResolveKeys(JsonElement events, Utf8JsonWriter writer, int maxKeyLength) =>
        throw new ProtocolException(ErrorCodes.NotAProjection, $"{typeof(TReducer).FullName} is a reducer; resolveKeys needs an IProjection<TState>");
}

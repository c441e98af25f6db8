using System;
using System.Collections.Generic;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace EventSourcing.Testing
{
    /// <summary>One batch folded as the host folds a group (runtime/EventSourcing.Runtime/Execution/RunnerBase.cs):
    /// the stored state read from its JSON (none: <c>new TState()</c>), a new instance of the reducer or projection,
    /// each event applied in order to the live state, <c>null</c> refused, and the state serialized after every event.
    /// Between batches only the JSON survives, as on the server.</summary>
    internal sealed class HostFold<TState> where TState : new()
    {
        readonly JsonSerializerOptions _options = HostJson.CreateOptions();
        readonly JsonTypeInfo<TState> _info;

        public HostFold() => _info = (JsonTypeInfo<TState>)_options.GetTypeInfo(typeof(TState));

        /// <summary>Returns the state's JSON after the batch; <c>null</c> when <paramref name="shouldDelete"/> (an
        /// <see cref="IDeletableProjection{TState}"/>'s, asked after each Apply) removed it after the last event. A removed
        /// state's next event starts again from <c>new TState()</c>, as on the host.</summary>
        public string? Fold(string? stateJson, IReadOnlyList<Event> batch, Func<TState, Event, TState> newApply, Func<TState, Event, bool>? shouldDelete = null)
        {
            if (batch.Count == 0) return stateJson;
            TState state;
            try
            {
                state = stateJson is null ? new TState() : JsonSerializer.Deserialize(stateJson, _info) ?? new TState();
            }
            catch (Exception ex)
            {
                throw new ApplyFailedException("STATE_DESERIALIZATION_FAILED", null, ex);
            }
            var json = stateJson;
            foreach (var e in batch)
            {
                try
                {
                    state = newApply(state, e);
                    if (state is null) throw new InvalidOperationException("Apply returned null");
                    if (shouldDelete is not null && shouldDelete(state, e))
                    {
                        state = new TState();
                        json = null;
                        continue;
                    }
                }
                catch (Exception ex) when (ex is not ApplyFailedException)
                {
                    throw new ApplyFailedException("APPLY_FAILED", e, ex);
                }
                try
                {
                    json = JsonSerializer.Serialize(state, _info);
                }
                catch (Exception ex)
                {
                    throw new ApplyFailedException("STATE_SERIALIZATION_FAILED", e, ex);
                }
            }
            return json;
        }

        /// <summary>The state a reader of the stored JSON sees.</summary>
        public TState Read(string? stateJson) => stateJson is null ? new TState() : JsonSerializer.Deserialize(stateJson, _info) ?? new TState();
    }
}

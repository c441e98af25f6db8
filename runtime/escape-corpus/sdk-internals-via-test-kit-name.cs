// expect: compile-error CS0117
// Issue 27 made the SDK's internals visible to EventSourcing.Sdk.Testing (the test kit sets Event.SerializerOptions as
// the host does). Tenant assemblies are named Tenant_<hash> by the host and compiled importing public metadata only,
// so the SDK's internals do not even exist for tenant code (CS0117): here, handing an event serializer options of its own.
using System.Text.Json;
using EventSourcing;

namespace Escape
{
    public sealed class EscapeState { public string Value { get; set; } = ""; }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            var forged = new Event { EventType = e.EventType, SerializerOptions = new JsonSerializerOptions() };
            state.Value = forged.EventType;
            return state;
        }
    }
}

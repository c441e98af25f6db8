// expect: compile-error ES0001: forbidden API: System.Text.Json.Serialization.Metadata.JsonMetadataServices.CreateObjectInfo
// Issue 27 (generators), red team: build JSON metadata by hand with the API the generator's output uses (allowed in IL for it),
// with an object creator that closes over a counter.
// Outcome: refused in the tenant's own sources (GeneratorOnlyApis), whatever the IL check allows for generated code.
using System;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using EventSourcing;

namespace Escape
{
    public sealed class Line { public string Sku { get; set; } = ""; }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            long made = 0;
            var info = JsonMetadataServices.CreateObjectInfo<Line>(new JsonSerializerOptions(),
                new JsonObjectInfoValues<Line> { ObjectCreator = () => { made++; return new Line(); } });
            state.Count = made + (info is null ? 0 : 1);
            return state;
        }
    }
}

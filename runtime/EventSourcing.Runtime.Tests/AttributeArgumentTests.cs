using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

public class AttributeArgumentTests
{
    [Fact]
    public void TypeNamesInAttributeArgumentsAreChecked()
    {
        const string source = """
            using System.Text.Json.Serialization;
            using EventSourcing;
            public sealed class S
            {
                [JsonConverter(typeof(System.Collections.Generic.List<System.Threading.CancellationToken>))]
                public int N { get; set; }
            }
            public sealed class AReducer : IReducer<S> { public S Apply(S s, Event e) => s; }
            """;
        var result = new InProcessHost(HostMode.Compile).Compile("A.cs", source);
        Assert.False(result["ok"]!.GetValue<bool>());
        Assert.Contains("forbidden API: System.Threading.CancellationToken in an attribute argument", result["compilationError"]!.GetValue<string>());
    }
}

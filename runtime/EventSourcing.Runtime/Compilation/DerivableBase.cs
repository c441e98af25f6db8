namespace EventSourcing.Runtime.Compilation;

/// <summary>A framework class tenant types may derive from, with the members they may override.</summary>
/// <param name="Type">Metadata name with arity, e.g. <c>System.Text.Json.Serialization.JsonConverter`1</c>.</param>
/// <param name="Why">Why deriving is safe.</param>
/// <param name="Overridable">Member (metadata name, e.g. get_Message) → who calls it with what.</param>
/// <param name="Refused">Every other overridable member of the class (and of its framework bases) → why it is refused.
/// Together with <paramref name="Overridable"/> this is every virtual the class has: a runtime test compares it with reflection,
/// so a member a new .NET adds fails the build instead of being allowed unseen.</param>
public sealed record DerivableBase(string Type, string Why, IReadOnlyDictionary<string, string> Overridable, IReadOnlyDictionary<string, string> Refused);

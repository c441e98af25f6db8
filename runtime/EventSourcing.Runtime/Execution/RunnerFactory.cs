using System.Text.Json;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Execution;

public static class RunnerFactory
{
    public static IRunner Create(Type implementation, JsonSerializerOptions options)
    {
        var reducer = FindInterface(implementation, typeof(IReducer<>));
        var projection = FindInterface(implementation, typeof(IProjection<>));
        if (reducer is null && projection is null)
            throw new ProtocolException(ErrorCodes.ClassNotFound, $"{implementation.FullName} implements neither IReducer<TState> nor IProjection<TState>");
        if (implementation.IsAbstract || implementation.IsGenericTypeDefinition || implementation.GetConstructor(Type.EmptyTypes) is null)
            throw new ProtocolException(ErrorCodes.ClassNotFound, $"{implementation.FullName} must be a concrete class with a public parameterless constructor");

        var runnerType = reducer is not null
            ? typeof(ReducerRunner<,>).MakeGenericType(implementation, reducer.GetGenericArguments()[0])
            : typeof(ProjectionRunner<,>).MakeGenericType(implementation, projection!.GetGenericArguments()[0]);
        return (IRunner)Activator.CreateInstance(runnerType, options)!;
    }

    static Type? FindInterface(Type type, Type open)
    {
        Type? found = null;
        foreach (var i in type.GetInterfaces())
        {
            if (!i.IsGenericType || i.GetGenericTypeDefinition() != open) continue;
            if (found is not null) throw new ProtocolException(ErrorCodes.ClassNotFound, $"{type.FullName} implements {open.Name} more than once");
            found = i;
        }
        return found;
    }
}

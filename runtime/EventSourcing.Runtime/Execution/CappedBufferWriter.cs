using System.Buffers;

namespace EventSourcing.Runtime.Execution;

/// <summary>
/// The scratch buffer one state is serialized into before it is written to the response. It refuses to
/// grow past what a state under <see cref="Cap"/> bytes could need, so a tenant's 40 MB state stops early
/// instead of being copied around (or taking the executor's heap) only to be refused afterwards.
/// </summary>
public sealed class CappedBufferWriter : IBufferWriter<byte>
{
    /// <summary>Utf8JsonWriter asks for up to 3 bytes per UTF-16 unit it is about to write (its transcoding worst
    /// case), plus a small constant; a request beyond <c>3 × Cap + Slack</c> cannot end in a state under the cap.</summary>
    const int MaxExpansion = 3;
    const int Slack = 64 * 1024;
    const int KeepBytes = 1 << 20;

    byte[] _buffer = new byte[1024];
    int _written;

    public int Cap { get; private set; } = int.MaxValue / MaxExpansion;

    /// <summary>Set once the state is known to be over the cap; stays set until the next <see cref="Reset"/>
    /// (tenant converters could swallow the exception, not this).</summary>
    public bool Overflowed { get; private set; }

    public int WrittenCount => _written;

    /// <summary>What the state is known to need at least: the bytes written, or more when the writer asked for
    /// room that only an over-large value needs (at least a third of what it asks for).</summary>
    public long MinimumSize { get; private set; }
    public ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _written);

    public void Reset(int cap)
    {
        Cap = cap;
        _written = 0;
        MinimumSize = 0;
        Overflowed = false;
    }

    /// <summary>Do not keep a huge buffer around after one big state.</summary>
    public void Trim()
    {
        _written = 0;
        if (_buffer.Length > KeepBytes) _buffer = new byte[1024];
    }

    public void Advance(int count)
    {
        if (count < 0 || _written + count > _buffer.Length) throw new ArgumentOutOfRangeException(nameof(count));
        _written += count;
        MinimumSize = Math.Max(MinimumSize, _written);
        if (_written > Cap) Overflowed = true;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    void Ensure(int sizeHint)
    {
        if (sizeHint < 1) sizeHint = 1;
        if (!Overflowed && _buffer.Length - _written >= sizeHint) return;
        var ceiling = (long)Cap * MaxExpansion + Slack;
        var needed = (long)_written + sizeHint;
        if (Overflowed || needed > ceiling)
        {
            MinimumSize = Math.Max(MinimumSize, _written + (long)sizeHint / MaxExpansion);
            Overflowed = true;
            throw new StateTooLargeException(_written);
        }
        var size = Math.Min(Math.Max(needed, (long)_buffer.Length * 2), Math.Min(ceiling, Array.MaxLength));
        Array.Resize(ref _buffer, (int)size);
    }
}

namespace EventSourcing.Runtime.Host;

/// <summary>
/// Reads newline-delimited JSON requests from <c>input</c> through one large buffer, hands each complete line
/// to the dispatcher in arrival order (pipelined requests are simply queued in the buffer), and writes each
/// response line to <c>output</c> with a single write (one syscall per response on the raw stdout stream).
/// </summary>
public static class StdioServer
{
    public const int MaxLineBytes = 256 * 1024 * 1024;
    const int InitialBuffer = 1 << 20;

    public static void Run(Stream input, Stream output, RequestDispatcher dispatcher)
    {
        var ready = new System.Buffers.ArrayBufferWriter<byte>(256);
        dispatcher.WriteReady(ready);
        output.Write(ready.WrittenSpan);
        output.Flush();
        // A batch answers item by item: each line goes out (one write, flushed) as soon as its item is done.
        dispatcher.ItemSink = line =>
        {
            output.Write(line.Span);
            output.Flush();
        };

        var buf = new byte[InitialBuffer];
        int start = 0, end = 0, scanned = 0;
        var discarding = false; // inside an over-long line: skip to its end
        while (true)
        {
            var nl = buf.AsSpan(scanned, end - scanned).IndexOf((byte)'\n');
            if (nl >= 0)
            {
                var lineEnd = scanned + nl;
                if (discarding)
                {
                    discarding = false;
                }
                else
                {
                    var length = lineEnd - start;
                    if (length > 0 && buf[lineEnd - 1] == (byte)'\r') length--;
                    if (length > 0) Respond(buf.AsMemory(start, length), output, dispatcher);
                }
                start = scanned = lineEnd + 1;
                continue;
            }
            scanned = end;

            // Need more bytes: move the partial line to the front, grow if the buffer is full.
            if (start > 0)
            {
                Buffer.BlockCopy(buf, start, buf, 0, end - start);
                end -= start;
                scanned -= start;
                start = 0;
            }
            else if (end == 0 && buf.Length > 16 * InitialBuffer)
            {
                buf = new byte[InitialBuffer]; // release the memory of an earlier huge request
            }
            if (end == buf.Length)
            {
                if (buf.Length >= MaxLineBytes)
                {
                    Log.Error($"request line longer than {MaxLineBytes} bytes; discarding it");
                    WriteOversize(output);
                    discarding = true;
                    start = end = scanned = 0;
                }
                else
                {
                    Array.Resize(ref buf, Math.Min(buf.Length * 2, MaxLineBytes));
                }
            }

            var n = input.Read(buf, end, buf.Length - end);
            if (n == 0)
            {
                if (!discarding && end > start) Respond(buf.AsMemory(start, end - start), output, dispatcher);
                return; // EOF: the parent closed stdin
            }
            end += n;
        }
    }

    static void Respond(ReadOnlyMemory<byte> line, Stream output, RequestDispatcher dispatcher)
    {
        var response = dispatcher.Handle(line);
        output.Write(response.Span);
        output.Flush();
    }

    static void WriteOversize(Stream output)
    {
        output.Write("{\"id\":null,\"type\":\"error\",\"payload\":{\"code\":\"BAD_REQUEST\",\"message\":\"request line too long\"}}\n"u8);
        output.Flush();
    }
}

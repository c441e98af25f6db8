import * as http from 'node:http';

/** An append's answer as it came over the wire: the exact body text and the replay header. */
export interface KeyedAnswer {
  status: number;
  text: string;
  body: any;
  replayed: string | undefined;
}

/**
 * POSTs `bodyText` (sent as is: the idempotency digest is of these bytes) with an optional
 * Idempotency-Key, each call on a connection of its own (agent: false), so concurrent calls are
 * concurrent connections to the service.
 */
export function postKeyed(baseUrl: string, apiKey: string, path: string, bodyText: string, idempotencyKey?: string): Promise<KeyedAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, baseUrl);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'x-api-key': apiKey,
          ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            text,
            body: text ? JSON.parse(text) : undefined,
            replayed: res.headers['idempotent-replayed'] as string | undefined,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.end(bodyText);
  });
}

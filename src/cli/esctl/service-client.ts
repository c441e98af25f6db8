import { EsctlConfig } from './esctl-config';

/** An answer of the service: its status and its body (parsed when JSON, else the text). */
export interface Answer {
  status: number;
  body: any;
}

/** A refusal or an unexpected answer, with the service's `error` code when it gave one; esctl prints it and exits 1. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The tenant API over node's fetch, authenticated with the saved key (X-API-Key). */
export class ServiceClient {
  constructor(
    readonly config: EsctlConfig,
    private readonly timeoutMs = 30_000,
  ) {}

  get(path: string): Promise<Answer> {
    return this.send('GET', path);
  }

  postJson(path: string, body: unknown): Promise<Answer> {
    return this.send('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  }

  /** multipart/form-data: the archive as `file`, the other parts as text fields. */
  postArchive(path: string, zip: Buffer, fields: Record<string, string> = {}): Promise<Answer> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'sources.zip');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    return this.send('POST', path, form);
  }

  /** The answer when its status is one of `ok`, else a ServiceError naming the service's error code and message. */
  async expect(answer: Promise<Answer>, ...ok: number[]): Promise<any> {
    const a = await answer;
    if (ok.includes(a.status)) return a.body;
    throw refusal(a);
  }

  private async send(method: string, path: string, body?: string | FormData, headers: Record<string, string> = {}): Promise<Answer> {
    let res: Response;
    try {
      res = await fetch(`${this.config.url}${path}`, {
        method,
        headers: { 'x-api-key': this.config.apiKey, ...headers },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new ServiceError(`cannot reach ${this.config.url}: ${(e as Error).message}`);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed };
  }
}

export function refusal(a: Answer): ServiceError {
  const b = a.body;
  if (b && typeof b === 'object' && typeof b.error === 'string') {
    return new ServiceError(`${a.status} ${b.error}: ${b.message ?? ''}`.trim(), a.status, b.error);
  }
  return new ServiceError(`${a.status}: ${typeof b === 'string' ? b : JSON.stringify(b)}`, a.status);
}

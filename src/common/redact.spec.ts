import { redactSecrets, redactUrl } from './redact';

const KEY = 'esk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
const PLAIN = 'bootstrap-key-without-prefix-123';

describe('redactSecrets', () => {
  it('removes a key from the query of a URL and keeps the rest', () => {
    expect(redactUrl(`/projections/p1/stream?afterSequence=3&apiKey=${PLAIN}&x=1`)).toBe(
      '/projections/p1/stream?afterSequence=3&apiKey=[REDACTED]&x=1',
    );
    expect(redactUrl(`/p?apikey=${PLAIN}`)).toBe('/p?apikey=[REDACTED]');
    expect(redactUrl(`/p?api_key=${PLAIN}#frag`)).toBe('/p?api_key=[REDACTED]#frag');
  });

  it('removes header values from JSON log lines and header dumps', () => {
    const line = JSON.stringify({
      headers: { 'x-api-key': PLAIN, authorization: `Bearer ${PLAIN}`, 'sec-websocket-protocol': `eventstore.v1, apikey.${PLAIN}` },
    });
    const out = redactSecrets(line);
    expect(out).not.toContain(PLAIN);
    expect(JSON.parse(out).headers['x-api-key']).toBe('[REDACTED]');
    expect(redactSecrets(`X-API-Key: ${PLAIN}\r\nHost: x`)).toBe('X-API-Key: [REDACTED]\r\nHost: x');
  });

  it('removes the subprotocol form, bearer tokens and anything that looks like an issued key', () => {
    expect(redactSecrets(`offered apikey.${PLAIN}, eventstore.v1`)).toBe('offered apikey.[REDACTED], eventstore.v1');
    expect(redactSecrets(`token Bearer ${PLAIN} sent`)).toBe('token Bearer [REDACTED] sent');
    expect(redactSecrets(`some message about ${KEY} here`)).toBe('some message about esk_[REDACTED] here');
  });

  it('removes webhook secrets and a password in a connection URL', () => {
    expect(redactSecrets('secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+/0= rotated')).toBe('secret whsec_[REDACTED] rotated');
    expect(redactSecrets('connect to postgres://events:s3cret@db:5432/events failed')).toBe(
      'connect to postgres://events:[REDACTED]@db:5432/events failed',
    );
    expect(redactSecrets('redis://:pw@redis:6379')).toBe('redis://:[REDACTED]@redis:6379');
  });

  it('leaves text without secrets alone', () => {
    const text = '{"level":30,"msg":"request completed","url":"/events/account-1?fromVersion=2"}';
    expect(redactSecrets(text)).toBe(text);
  });
});

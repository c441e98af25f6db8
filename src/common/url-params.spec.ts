import { requestTargetProblem } from './url-params';

describe('requestTargetProblem', () => {
  const codeOf = (url: string) => requestTargetProblem(url)?.code ?? null;

  it('passes ordinary targets, escapes and 1,024-byte parameters', () => {
    expect(codeOf('/events')).toBeNull();
    expect(codeOf('/projections/p/state/a%2Fb%C3%A9?minPosition=3&x=a+b')).toBeNull();
    expect(codeOf(`/projections/p/state/${'a'.repeat(1024)}`)).toBeNull();
    expect(codeOf(`/projections/p/state/${encodeURIComponent('€'.repeat(341) + 'y')}`)).toBeNull();
    expect(codeOf('/x?%E6%BC%A2=%E6%BC%A2')).toBeNull();
  });

  it('refuses NUL and what is not percent-encoded UTF-8, in the path and the query', () => {
    for (const bad of ['%00', 'a%00', '%C3%28', '%ED%A0%80', '%zz', '%E4%B8']) {
      expect(requestTargetProblem(`/projections/${bad}/status`)).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'path' } });
      expect(requestTargetProblem(`/projections/p/keys?after=${bad}`)).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: { field: 'after' },
      });
      expect(requestTargetProblem(`/projections/p/keys?${bad}=1`)).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: { field: 'query' },
      });
    }
  });

  it('refuses a path parameter over 1,024 bytes of UTF-8, counted after decoding', () => {
    expect(requestTargetProblem(`/projections/p/state/${'a'.repeat(1025)}`)).toMatchObject({
      code: 'URI_TOO_LONG',
      details: { limit: 1024 },
    });
    expect(requestTargetProblem(`/projections/p/state/${encodeURIComponent('€'.repeat(342))}`)?.message).toContain('1026');
    // The query is not a path parameter: its length is bounded by the header limit.
    expect(codeOf(`/projections/p/keys?after=${'a'.repeat(2000)}`)).toBeNull();
  });
});

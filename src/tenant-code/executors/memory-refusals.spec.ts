import { HostCallError } from '../host/host-process';
import { MemoryRefusals } from './memory-refusals';

describe('MemoryRefusals', () => {
  const error = new HostCallError('TENANT_MEMORY_EXCEEDED', "tenant 't' would hold 240 MiB in this executor");

  it('answers a refused upload at once while its tenant is quarantined, and only that upload of that tenant', () => {
    const r = new MemoryRefusals();
    r.remember('t', 'hog', error);
    expect(r.refusal('t', 'hog', true)).toBe(error);
    expect(r.refusal('t', 'other', true)).toBeUndefined();
    expect(r.refusal('u', 'hog', true)).toBeUndefined();
  });

  it('forgets it once the quarantine is over (the upload is tried again), on a redeploy, or on a sweep', () => {
    const r = new MemoryRefusals();
    r.remember('t', 'hog', error);
    expect(r.refusal('t', 'hog', false)).toBeUndefined();
    expect(r.refusal('t', 'hog', true)).toBeUndefined();

    r.remember('t', 'hog', error);
    r.forget('t', 'hog');
    expect(r.refusal('t', 'hog', true)).toBeUndefined();

    r.remember('t', 'hog', error);
    r.remember('q', 'hog', error);
    r.prune((tenant) => tenant === 'q');
    expect(r.refusal('t', 'hog', true)).toBeUndefined();
    expect(r.refusal('q', 'hog', true)).toBe(error);
  });
});

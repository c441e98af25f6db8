import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST_ERROR_CODES, HOST_REQUEST_TYPES, ITEM_ERROR_CODES, PROTOCOL_VERSION } from './runtime-protocol';

const protocol = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../runtime/protocol.json'), 'utf8'));

describe('runtime protocol', () => {
  it('names exactly the request types of runtime/protocol.json', () => {
    expect([...HOST_REQUEST_TYPES].sort()).toEqual(Object.keys(protocol.requests).sort());
  });

  it('speaks the host’s protocol version', () => {
    expect(protocol.protocolVersion).toBe(PROTOCOL_VERSION);
  });

  it('knows exactly the item error codes of runtime/protocol.json', () => {
    expect([...ITEM_ERROR_CODES].sort()).toEqual([...protocol.definitions.itemError.properties.code.enum].sort());
  });

  it('knows exactly the error codes of runtime/protocol.json', () => {
    expect([...HOST_ERROR_CODES].sort()).toEqual([...protocol.envelopes.error.properties.payload.properties.code.enum].sort());
  });

  it('sends the tenant and its memory cap with a load, and reads what the tenant is charged', () => {
    expect(Object.keys(protocol.requests.load.payload.properties)).toEqual(expect.arrayContaining(['tenantId', 'tenantMemoryBytes']));
    expect(protocol.requests.load.result.required).toEqual(expect.arrayContaining(['chargedBytes', 'tenantBytes']));
  });

  it('names the optional limits the host reads', () => {
    expect(Object.keys(protocol.requests.apply.payload.properties)).toEqual(expect.arrayContaining(['maxStateBytes', 'maxResultBytes']));
    expect(Object.keys(protocol.requests.apply.result.properties.results.items.oneOf[0].properties)).toContain('truncated');
    expect(Object.keys(protocol.requests.apply.payload.properties.groups.items.properties)).toContain('lastStateOnly');
    expect(Object.keys(protocol.requests.resolveKeys.payload.properties)).toContain('maxKeyLength');
  });

  it('knows the batch request and the item lines that answer it', () => {
    expect(protocol.requests.batch.modes).toEqual(['exec', 'all']);
    expect(protocol.requests.batch.payload.required).toEqual(['items']);
    expect(protocol.requests.batch.payload.properties.items.items.properties.op.enum.sort()).toEqual(['apply', 'resolveKeys']);
    expect(protocol.events.item.payload.required).toEqual(['index']);
    expect(Object.keys(protocol.events.item.payload.properties).sort()).toEqual(['error', 'index', 'result']);
  });

  it('sends the payload fields the host requires', () => {
    const required = (t: string): string[] => protocol.requests[t].payload.required ?? [];
    expect(required('compile')).toEqual(['files']);
    expect(required('apply').sort()).toEqual(['assemblyId', 'className', 'groups'].sort());
    expect(required('resolveKeys').sort()).toEqual(['assemblyId', 'className', 'events'].sort());
    expect(required('load').sort()).toEqual(['assembly', 'assemblyId'].sort());
    expect(Object.keys(protocol.requests.load.payload.properties)).toEqual(expect.arrayContaining(['tenantId', 'tenantMemoryBytes']));
  });
});

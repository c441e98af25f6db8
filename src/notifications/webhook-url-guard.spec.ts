import { DomainError } from '../common/domain-error';
import { isPublicAddress, WebhookUrlGuard } from './webhook-url-guard';

const fakeDns = (answers: Record<string, string[]>) => async (host: string) => {
  if (!(host in answers)) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answers[host];
};

const dns = fakeDns({
  'hooks.example.com': ['93.184.215.14'],
  'v6.example.com': ['2606:4700::6810:84e5', '93.184.215.14'],
  intranet: ['10.1.2.3'],
  'rebind.example.com': ['169.254.169.254'],
  'mixed.example.com': ['93.184.215.14', '192.168.1.10'],
  'mixed6.example.com': ['2606:4700::6810:84e5', 'fd00:ec2::254'],
});

function refusal(fn: () => unknown): DomainError | undefined {
  try {
    fn();
  } catch (err) {
    return err as DomainError;
  }
  return undefined;
}

async function asyncRefusal(promise: Promise<unknown>): Promise<DomainError | undefined> {
  return promise.then(
    () => undefined,
    (err: DomainError) => err,
  );
}

describe('WebhookUrlGuard', () => {
  const strict = new WebhookUrlGuard({ allowPrivate: false, resolve: dns });
  const lenient = new WebhookUrlGuard({ allowPrivate: true, resolve: dns });

  const malformed = [
    'not a url',
    'ftp://hooks.example.com/x',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'http://user:pass@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://:pass@hooks.example.com/',
    `https://hooks.example.com/${'a'.repeat(2048)}`,
  ];

  const notPublic = [
    'http://localhost:3000/hook',
    'http://LOCALHOST./hook',
    'http://api.localhost/hook',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/', // decimal 127.0.0.1
    'http://0x7f.1/', // hex and short form
    'http://017700000001/', // octal
    'http://127.0.0.1./',
    'http://0/',
    'http://0.0.0.0:8080/',
    'http://10.0.0.5/',
    'http://100.64.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.0.0.8/',
    'http://192.0.2.1/',
    'http://192.168.1.1/',
    'http://198.18.0.1/',
    'http://198.19.255.255/',
    'http://198.51.100.7/',
    'http://203.0.113.9/',
    'http://224.0.0.1/',
    'http://239.255.255.250/',
    'http://240.0.0.1/',
    'http://255.255.255.255/',
    'http://[::]/',
    'http://[::1]/',
    'http://[fc00::1]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[ff02::1]/',
    'http://[2001:db8::1]/',
    'http://[::ffff:127.0.0.1]/', // normalised to [::ffff:7f00:1]
    'http://[::ffff:a9fe:a9fe]/',
    'http://[::127.0.0.1]/',
    'http://[64:ff9b::10.0.0.1]/',
    'http://[2002:c0a8:101::1]/', // 6to4 of 192.168.1.1
  ];

  const acceptable = [
    'https://hooks.example.com/webhooks?tenant=1',
    'http://hooks.example.com:8080/',
    'https://intranet/hook', // dotless names are left to DNS
    'http://93.184.215.14/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://[2606:4700::6810:84e5]/',
    'http://[::ffff:93.184.215.14]/',
    'http://[64:ff9b::93.184.215.14]/',
  ];

  it('normalises numeric IPv4 forms before judging them', () => {
    expect(new URL('http://2130706433/').hostname).toBe('127.0.0.1');
    expect(new URL('http://0x7f.1/').hostname).toBe('127.0.0.1');
    expect(new URL('http://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]');
  });

  it.each([...malformed, ...notPublic])('refuses %s', (url) => {
    const err = refusal(() => strict.checkSyntax(url));
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'WEBHOOK_URL_REFUSED', details: { url } });
  });

  it.each(acceptable)('accepts %s', (url) => {
    expect(strict.checkSyntax(url)).toBeInstanceOf(URL);
  });

  it('still refuses malformed URLs when private addresses are allowed', () => {
    for (const url of malformed) expect(refusal(() => lenient.checkSyntax(url))).toMatchObject({ code: 'WEBHOOK_URL_REFUSED' });
  });

  it('accepts every well-formed URL when private addresses are allowed', async () => {
    for (const url of [...notPublic, ...acceptable]) expect(lenient.checkSyntax(url)).toBeInstanceOf(URL);
    await expect(lenient.resolvePublic('http://intranet:8080/hook')).resolves.toMatchObject({ address: '10.1.2.3', family: 4 });
    await expect(lenient.resolvePublic('http://[::1]:3000/')).resolves.toMatchObject({ address: '::1', family: 6 });
  });

  describe('resolvePublic', () => {
    it('returns the address to connect to', async () => {
      const resolved = await strict.resolvePublic('https://hooks.example.com/webhooks');
      expect(resolved).toEqual({ url: new URL('https://hooks.example.com/webhooks'), address: '93.184.215.14', family: 4 });
      await expect(strict.resolvePublic('https://v6.example.com/')).resolves.toMatchObject({
        address: '2606:4700::6810:84e5',
        family: 6,
      });
    });

    it('takes an IP literal as its own address, without DNS', async () => {
      const resolve = jest.fn();
      const guard = new WebhookUrlGuard({ allowPrivate: false, resolve });
      await expect(guard.resolvePublic('http://[2606:4700::6810:84e5]:8443/')).resolves.toMatchObject({
        address: '2606:4700::6810:84e5',
        family: 6,
      });
      expect(resolve).not.toHaveBeenCalled();
    });

    it.each(['https://intranet/hook', 'https://rebind.example.com/', 'https://mixed.example.com/', 'https://mixed6.example.com/'])(
      'refuses %s, which resolves to a private address',
      async (url) => {
        expect(await asyncRefusal(strict.resolvePublic(url))).toMatchObject({
          code: 'WEBHOOK_URL_REFUSED',
          message: expect.stringMatching(/not a public address/),
          details: { url },
        });
      },
    );

    it('refuses a name that does not resolve', async () => {
      expect(await asyncRefusal(strict.resolvePublic('https://nowhere.example.com/'))).toMatchObject({
        code: 'WEBHOOK_URL_REFUSED',
        message: expect.stringMatching(/could not be resolved/),
      });
      const empty = new WebhookUrlGuard({ allowPrivate: false, resolve: async () => [] });
      expect(await asyncRefusal(empty.resolvePublic('https://hooks.example.com/'))).toMatchObject({ code: 'WEBHOOK_URL_REFUSED' });
    });

    it('asks the system resolver by default', async () => {
      const system = new WebhookUrlGuard({ allowPrivate: true });
      const { address } = await system.resolvePublic('http://localhost:9/');
      expect(['127.0.0.1', '::1']).toContain(address);
    });

    it('refuses before DNS what the syntax check refuses', async () => {
      const resolve = jest.fn();
      const guard = new WebhookUrlGuard({ allowPrivate: false, resolve });
      expect(await asyncRefusal(guard.resolvePublic('http://localhost/'))).toMatchObject({ code: 'WEBHOOK_URL_REFUSED' });
      expect(resolve).not.toHaveBeenCalled();
    });
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['::ffff:808:808', true],
    ['64:ff9b::8.8.8.8', true],
    ['2002:808:808::1', true],
    ['0.1.2.3', false],
    ['127.255.255.254', false],
    ['169.254.169.254', false],
    ['172.15.255.255', true],
    ['172.16.0.0', false],
    ['192.167.255.255', true],
    ['192.169.0.0', true],
    ['198.17.255.255', true],
    ['223.255.255.255', true],
    ['::ffff:7f00:1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['fd00:ec2::254', false],
    ['fe80::1%eth0', false],
    ['febf::1', false],
    ['fec0::1', false],
    ['ff00::1', false],
    ['100::1', false],
    ['2001::1', false], // Teredo
    ['2001:db8:ffff::1', false],
    ['2001:db9::1', true],
    ['not-an-ip', false],
    ['', false],
  ])('%s → %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected);
  });
});

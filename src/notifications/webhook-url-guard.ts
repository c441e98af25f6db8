import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { DomainError } from '../common/domain-error';

/**
 * Keeps tenant-supplied webhook URLs from reaching the service's own network (SSRF): loopback,
 * private ranges, cloud metadata endpoints. Hostnames are judged by what they resolve to, and
 * the caller connects to the address returned here, so a second DNS answer cannot differ.
 */

const MAX_URL_LENGTH = 2048;
const REFUSED_HOSTNAMES = [/^localhost$/, /\.localhost$/, /^metadata\.google\.internal$/];

export interface WebhookUrlGuardOptions {
  /** For development and tests against local receivers; never in a shared deployment. */
  allowPrivate: boolean;
  resolve?: (host: string) => Promise<string[]>;
}

export interface ResolvedWebhookUrl {
  url: URL;
  address: string;
  family: 4 | 6;
}

const lookupAll = async (host: string): Promise<string[]> => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class WebhookUrlGuard {
  private readonly allowPrivate: boolean;
  private readonly resolve: (host: string) => Promise<string[]>;

  constructor(opts: WebhookUrlGuardOptions) {
    this.allowPrivate = opts.allowPrivate;
    this.resolve = opts.resolve ?? lookupAll;
  }

  /** What can be refused without DNS, so registration answers at once for obvious cases. */
  checkSyntax(url: string): URL {
    if (url.length > MAX_URL_LENGTH) throw refused(url, `longer than ${MAX_URL_LENGTH} characters`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw refused(url, 'not a valid URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw refused(url, 'only http and https are allowed');
    // Credentials in the URL would end up in logs and delivery records.
    if (parsed.username || parsed.password) throw refused(url, 'must not contain credentials');
    const host = bareHost(parsed);
    if (!host) throw refused(url, 'has no host');
    if (!this.allowPrivate) {
      if (isIP(host) && !isPublicAddress(host)) throw refused(url, `${host} is not a public address`);
      const name = host.replace(/\.$/, '');
      if (REFUSED_HOSTNAMES.some((re) => re.test(name))) throw refused(url, `${name} is not a public host`);
    }
    return parsed;
  }

  /**
   * At upload: refuses what is (or resolves to) not public; a name that does not resolve now is
   * accepted — DNS may be down for a moment, and every delivery attempt checks again.
   */
  async checkRegistration(url: string): Promise<void> {
    await this.check(url, false);
  }

  async resolvePublic(url: string): Promise<ResolvedWebhookUrl> {
    return (await this.check(url, true))!;
  }

  /** Null only when the name does not resolve and `mustResolve` is false. */
  private async check(url: string, mustResolve: boolean): Promise<ResolvedWebhookUrl | null> {
    const parsed = this.checkSyntax(url);
    const host = bareHost(parsed);
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch {
        addresses = [];
      }
    }
    if (addresses.length === 0) {
      if (!mustResolve) return null;
      throw refused(url, `${host} could not be resolved`);
    }
    // Any private answer refuses: the name's owner chooses which one a later connect would get.
    if (!this.allowPrivate) {
      const inner = addresses.find((a) => !isPublicAddress(a));
      if (inner !== undefined) throw refused(url, `${host} resolves to ${inner}, which is not a public address`);
    }
    const address = addresses[0];
    return { url: parsed, address, family: isIP(address) === 6 ? 6 : 4 };
  }
}

function refused(url: string, reason: string): DomainError {
  return new DomainError('WEBHOOK_URL_REFUSED', `webhook URL refused: ${reason}`, { url });
}

/** The hostname without IPv6 brackets; `new URL` has already normalised numeric IPv4 forms. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** False for anything not routable on the public internet, and for anything that is not an IP. */
export function isPublicAddress(ip: string): boolean {
  switch (isIP(ip)) {
    case 4:
      return isPublicIPv4(ipv4ToInt(ip));
    case 6:
      return isPublicIPv6(ipv6ToWords(ip));
    default:
      return false;
  }
}

const V4_NON_PUBLIC: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4], // includes 255.255.255.255
];
const V4_BLOCKS = V4_NON_PUBLIC.map(([base, bits]) => ({ base: ipv4ToInt(base), mask: (~0 << (32 - bits)) >>> 0 }));

function isPublicIPv4(n: number): boolean {
  return !V4_BLOCKS.some(({ base, mask }) => (n & mask) >>> 0 === base);
}

function isPublicIPv6(w: number[]): boolean {
  const embeddedV4 = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d and NAT64 64:ff9b::/96 all reach the
  // embedded IPv4 host, so that host decides.
  if (zeroUpTo(5) && w[5] === 0xffff) return isPublicIPv4(embeddedV4(w[6], w[7]));
  if (zeroUpTo(6)) return isPublicIPv4(embeddedV4(w[6], w[7])); // also :: and ::1
  if (w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0)) {
    return isPublicIPv4(embeddedV4(w[6], w[7]));
  }
  // Only global unicast 2000::/3 is public; this excludes fc00::/7, fe80::/10, ff00::/8 and the rest.
  if ((w[0] & 0xe000) !== 0x2000) return false;
  if (w[0] === 0x2001 && w[1] === 0x0db8) return false; // documentation
  if (w[0] === 0x2001 && w[1] < 0x0200) return false; // 2001::/23 protocol assignments, Teredo among them
  if (w[0] === 0x2002) return isPublicIPv4(embeddedV4(w[1], w[2])); // 6to4 carries its IPv4 host
  return true;
}

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((n, octet) => ((n << 8) | Number(octet)) >>> 0, 0);
}

/** The eight 16-bit words of a valid IPv6 address (as `isIP` accepts it). */
function ipv6ToWords(ip: string): number[] {
  let text = ip.replace(/%.*$/, '');
  if (text.includes('.')) {
    const cut = text.lastIndexOf(':') + 1;
    const v4 = ipv4ToInt(text.slice(cut));
    text = `${text.slice(0, cut)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const words = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const front = words(head);
  const back = words(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

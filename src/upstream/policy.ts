/**
 * Where upstream calls may go (docs/security.md, "Where upstream calls may
 * go"). Custom hosts, the generic proxy and a service account's token_uri
 * let callers choose where the gateway connects; this keeps them from cloud
 * metadata services and whatever else the operator denies.
 *
 * The check runs in the connector of the one pool, per new connection: on
 * the URL's host before any lookup (names, IP literals in any notation the
 * URL parser reads: it has made them dotted or compressed by then), and for
 * a name on every address the lookup answered, the very addresses the socket
 * then connects to. A name that resolved to an allowed address once and to a
 * denied one later (DNS rebinding) is checked again at its next connection.
 *
 * Precedence: a rule on the host name decides before any on addresses (a
 * name is one service, a range many); among names, an exact name before
 * `*.suffix`, the longer suffix first; among ranges, the longest prefix
 * first, as a routing table chooses; on a tie ALLOW wins, so an operator can
 * lift a default denial by naming the same range.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import { BlockList, isIP, SocketAddress, type LookupFunction } from 'node:net';
import type { buildConnector } from 'undici';
import { GatewayError } from '../shared/errors.js';
import { buildUndiciConnector } from './undici.js';
import { parseAddressRule, type AddressRule, type UpstreamRules } from '../settings.js';

/** Denied unless GATEWAY_UPSTREAM_ALLOW says otherwise, with why (shown in the refusal). */
export const DEFAULT_DENY: ReadonlyArray<readonly [entry: string, why: string]> = [
  // 169.254.169.254: AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack; 169.254.170.2 and .23: ECS task and EKS pod credentials.
  ['169.254.0.0/16', 'link-local, cloud metadata services'],
  ['fe80::/10', 'IPv6 link-local'],
  ['fd00:ec2::254', 'AWS instance metadata over IPv6'],
  ['fd00:ec2::23', 'EKS Pod Identity agent over IPv6'],
  ['100.100.100.200', 'Alibaba Cloud instance metadata'],
  ['168.63.129.16', 'Azure platform endpoint (WireServer)'],
  // Linux connects "this host" addresses to the machine itself: a way around a loopback denial, never a provider.
  ['0.0.0.0/8', 'this host'],
  ['::', 'this host'],
  ['metadata.google.internal', 'Google Cloud metadata server'],
];

export const DENIED_CODE = 'upstream_address_denied';

/**
 * A call the policy refused: 403, never sent, not retried, no verdict for a
 * circuit breaker. It travels through undici as the connection's error.
 */
export class UpstreamAddressDenied extends GatewayError {
  constructor(host: string, address: string | null, rule: Rule) {
    const what = address === null || address === host ? host : `${host} (${address})`;
    super(403, `upstream call to ${what} refused by the gateway's upstream policy: ${rule.text} (${rule.origin})`, { code: DENIED_CODE });
  }
}

interface Rule {
  allow: boolean;
  text: string;
  /** Where the rule comes from: the variable, or "denied by default: <why>". */
  origin: string;
}

interface RangeRule extends Rule {
  /** An IPv4 range: checked for IPv4 addresses, and for IPv6 ones that embed them. */
  v4: boolean;
  /** Prefix length counted in IPv6 bits, so IPv4 and IPv6 rules compare (an IPv4 /p is an IPv6 /96+p). */
  bits: number;
  list: BlockList;
}

interface NameRule extends Rule {
  name: string;
  subdomains: boolean;
}

/** What the URL's host says before any lookup: allowed (connect), refused, or up to the addresses its name resolves to. */
export type HostVerdict = 'allow' | 'resolve' | UpstreamAddressDenied;

export class UpstreamPolicy {
  private readonly ranges: RangeRule[] = [];
  private readonly names: NameRule[] = [];

  constructor(rules: UpstreamRules = { deny: [], allow: [] }) {
    for (const [entry, why] of DEFAULT_DENY) this.add(parseAddressRule(entry)!, false, `denied by default: ${why}`);
    for (const r of rules.deny) this.add(r, false, 'GATEWAY_UPSTREAM_DENY');
    for (const r of rules.allow) this.add(r, true, 'GATEWAY_UPSTREAM_ALLOW');
    const tie = (a: Rule, b: Rule): number => Number(b.allow) - Number(a.allow);
    this.ranges.sort((a, b) => b.bits - a.bits || tie(a, b));
    this.names.sort((a, b) => Number(a.subdomains) - Number(b.subdomains) || b.name.length - a.name.length || tie(a, b));
  }

  /** The URL's hostname as undici has it (lower-case, IPv6 without brackets). */
  host(hostname: string): HostVerdict {
    if (isIP(hostname) !== 0) return this.address(hostname, hostname) ?? 'allow';
    const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
    const rule = this.names.find((r) => (r.subdomains ? name.endsWith(`.${r.name}`) : name === r.name));
    if (rule === undefined) return 'resolve';
    return rule.allow ? 'allow' : new UpstreamAddressDenied(hostname, null, rule);
  }

  /** An address `host` is about to be connected to: null when allowed. */
  address(host: string, address: string): UpstreamAddressDenied | null {
    const family = isIP(address);
    // Not an address the policy can place (a resolver's odd answer): refused rather than guessed.
    if (family === 0) return new UpstreamAddressDenied(host, address, { allow: false, text: 'not an IP address', origin: 'unplaceable' });
    // Parsed once for every rule (a string is parsed again by each check).
    const parsed = new SocketAddress({ address, family: family === 4 ? 'ipv4' : 'ipv6' });
    // An IPv4 address meets IPv4 rules only, so that ::/0 means IPv6; an IPv6 one meets both (mapped and NAT64 forms).
    const rule = this.ranges.find((r) => (family === 6 || r.v4) && r.list.check(parsed));
    return rule === undefined || rule.allow ? null : new UpstreamAddressDenied(host, address, rule);
  }

  private add(rule: AddressRule, allow: boolean, origin: string): void {
    if (rule.kind === 'host') {
      this.names.push({ allow, origin, text: rule.text, name: rule.name, subdomains: rule.subdomains });
      return;
    }
    const list = new BlockList();
    list.addSubnet(rule.network, rule.prefix, rule.family);
    const v4 = rule.family === 'ipv4';
    // BlockList matches an IPv4 rule against IPv4-mapped IPv6 (::ffff:a.b.c.d) itself; the NAT64 well-known prefix
    // (64:ff9b::/96, RFC 6052) reaches the same IPv4 hosts through a translator, so it is added here.
    if (v4) list.addSubnet(nat64(rule.network), 96 + rule.prefix, 'ipv6');
    this.ranges.push({ allow, origin, text: rule.text, v4, bits: v4 ? 96 + rule.prefix : rule.prefix, list });
  }
}

function nat64(ipv4: string): string {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  return `64:ff9b::${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * The pool's connector: the policy on the URL's host, then, for a name, on
 * every address `resolve` answers (dns.lookup unless a test answers itself).
 * A refusal never opens a socket.
 */
export function policedConnector(policy: UpstreamPolicy, resolve: LookupFunction = dnsLookup): buildConnector.connector {
  const trusted = buildUndiciConnector({ lookup: resolve });
  const checked = buildUndiciConnector({ lookup: checkedLookup(policy, resolve) });
  return (opts, callback) => {
    const verdict = policy.host(opts.hostname);
    if (verdict === 'allow') trusted(opts, callback);
    else if (verdict === 'resolve') checked(opts, callback);
    else process.nextTick(callback, verdict, null);
  };
}

/** `resolve`, refusing a name when any address it answers is denied (a mixed answer is refused whole: it is no accident). */
function checkedLookup(policy: UpstreamPolicy, resolve: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, answer) => {
      const addresses = answer as LookupAddress[];
      if (err === null && addresses.length === 0) err = Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
      if (err !== null) return callback(err, '');
      for (const { address } of addresses) {
        const denied = policy.address(hostname, address);
        if (denied !== null) return callback(denied, '');
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * Node's own HTTP agents under the policy, for clients that do not take
 * undici's dispatcher (the AWS SDK's node handler): each new connection's
 * host is checked as the connector checks it, and a name's addresses through
 * the same lookup. A refusal never opens a socket.
 */
export function policedNodeAgents(policy: UpstreamPolicy, resolve: LookupFunction = dnsLookup): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  const lookup = checkedLookup(policy, resolve);
  const options = { keepAlive: true, maxSockets: 16 };
  // Node's agents call createConnection(options, oncreate): a socket returned is used, or oncreate(err) is awaited.
  const police = <O extends { host?: string | null; lookup?: LookupFunction }>(base: (o: O, cb: (e: Error | null, s?: Duplex) => void) => Duplex | undefined) =>
    (o: O, cb: (e: Error | null, s?: Duplex) => void): Duplex | undefined => {
      const host = (o.host ?? 'localhost').replace(/^\[|\]$/g, '').toLowerCase();
      const verdict = policy.host(host);
      if (verdict instanceof UpstreamAddressDenied) {
        process.nextTick(cb, verdict);
        return undefined;
      }
      return base({ ...o, lookup: verdict === 'allow' ? resolve : lookup }, cb);
    };
  const httpAgent = new HttpAgent(options);
  const httpsAgent = new HttpsAgent(options);
  httpAgent.createConnection = police(httpAgent.createConnection.bind(httpAgent) as never);
  httpsAgent.createConnection = police(httpsAgent.createConnection.bind(httpsAgent) as never);
  return { httpAgent, httpsAgent };
}

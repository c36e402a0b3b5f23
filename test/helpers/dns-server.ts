import { createSocket, type RemoteInfo } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { Tap } from './tap.js';

// A DNS server on 127.0.0.1 (UDP) answering TXT questions from a table the test fills: what
// email domain verification and DKIM checks look up, through node:dns like any real resolver.

const TXT = 16;

export interface DnsServer {
  /** `host:port`, for `dns_servers` and Resolver.setServers. */
  address: string;
  /** TXT records by name (any case); a value longer than 255 bytes is sent in chunks, as DNS does. */
  txt: Map<string, string[]>;
  /** A node:dns Resolver pointed at this server. */
  resolver(): Resolver;
  /** Questions asked, `name TYPE`, in order. */
  asked: string[];
}

function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = at;
  while (msg[i] !== 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]).toString('latin1'));
    i += 1 + msg[i];
  }
  return { name: labels.join('.'), end: i + 1 };
}

function txtRdata(value: string): Buffer {
  const bytes = Buffer.from(value);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (!bytes.length) break;
  }
  return Buffer.concat(parts);
}

/** The answer to one query: the question echoed, then every TXT record of the name (or NXDOMAIN). */
function answer(query: Buffer, txt: Map<string, string[]>, asked: string[]): Buffer {
  const { name, end } = readName(query, 12);
  const type = query.readUInt16BE(end);
  asked.push(`${name} ${type === TXT ? 'TXT' : type}`);
  const values = type === TXT ? (txt.get(name.toLowerCase()) ?? []) : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  const known = txt.has(name.toLowerCase());
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2); // QR, AA, RD, rcode
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(values.length, 6);
  const question = query.subarray(12, end + 4);
  const answers = values.map((v) => {
    const rdata = txtRdata(v);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(TXT, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...answers]);
}

export async function dnsServer(t: Tap): Promise<DnsServer> {
  const sock = createSocket('udp4');
  const txt = new Map<string, string[]>();
  const asked: string[] = [];
  sock.on('message', (msg: Buffer, from: RemoteInfo) => {
    try {
      sock.send(answer(msg, txt, asked), from.port, from.address);
    } catch {
      // a malformed query gets no answer, as from a real server
    }
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => sock.close(() => resolve())));
  const address = `127.0.0.1:${sock.address().port}`;
  return {
    address,
    txt,
    asked,
    resolver() {
      const r = new Resolver({ timeout: 2000, tries: 1 });
      r.setServers([address]);
      return r;
    },
  };
}

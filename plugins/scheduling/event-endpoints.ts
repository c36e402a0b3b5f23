import type { Kysely } from 'kysely';
import { deriveKey, open, seal, iso } from '../../core/kit/area.js';

// An account's event endpoints: where the gateway's events (email.delivered, sms.failed…) are
// delivered, each with its own whsec_ secret, sealed at rest like the webhook secrets
// (AES-256-GCM under a key derived from the master key, bound to the endpoint).

export interface EndpointRow {
  endpoint_id: string;
  account_id: string;
  url: string;
  event_types: string | null;
  description: string | null;
  secret: string;
  created_at: number | string;
}

export class EndpointSecrets {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = deriveKey(masterKey, 'svc-gateway event endpoint salt v1', 'event endpoint secrets v1');
  }

  seal(accountId: string, endpointId: string, secret: string): string {
    return seal(this.key, secret, `${accountId}|${endpointId}`);
  }

  open(row: Pick<EndpointRow, 'account_id' | 'endpoint_id' | 'secret'>): string {
    return open(this.key, row.secret, `${row.account_id}|${row.endpoint_id}`);
  }
}

export function typesOf(row: EndpointRow): string[] | null {
  return row.event_types === null ? null : (JSON.parse(row.event_types) as string[]);
}

/** Whether an endpoint takes events of `type`. */
export function wants(row: EndpointRow, type: string): boolean {
  const types = typesOf(row);
  return types === null || types.includes(type);
}

export function wireEndpoint(row: EndpointRow) {
  return {
    endpoint_id: row.endpoint_id,
    url: row.url,
    event_types: typesOf(row),
    ...(row.description ? { description: row.description } : {}),
    created_at: iso(Number(row.created_at)),
  };
}

export function endpointOf(db: Kysely<any>, accountId: string, id: string): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('event_endpoints')
    .selectAll()
    .where('endpoint_id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst() as Promise<EndpointRow | undefined>;
}

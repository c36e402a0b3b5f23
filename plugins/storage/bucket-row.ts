/** A bucket as the gateway's database records it. */
export interface BucketRow {
  bucket_id: string;
  account_id: string;
  name: string;
  vendor: string;
  region: string;
  acl: 'private' | 'public';
  created_at: number;
  /** Results only: the Content-Disposition a public result was saved with, for unsigned GETs. */
  content_disposition?: string;
}

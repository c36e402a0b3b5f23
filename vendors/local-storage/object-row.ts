/**
 * One object's row in the local index. In its own file because both the index and the import of
 * legacy metadata files (which the index runs) read it.
 */
export interface ObjectRow {
  key: string;
  size: number;
  etag: string;
  content_type: string;
  last_modified: number;
  version: string;
  /** The bytes of an object stored inline; null for one with a data file. */
  data: Buffer | null;
}

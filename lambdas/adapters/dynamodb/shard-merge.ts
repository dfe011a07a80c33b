// Several partitions of one sort order read as one: the rows of every partition merged by their sort key (ids
// are unique across partitions), each partition read page by page only when its next row is needed. So a listing
// over sharded partitions returns exactly the rows, in exactly the order, that one partition holding them all
// would, and a cursor (the last id returned) resumes it in every partition at once.
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

type Row = Record<string, unknown>;

interface Partition {
  readonly input: QueryCommandInput;
  rows: Row[];
  cursor: Row | undefined;
  started: boolean;
  pages: number;
}

export interface ShardMergeOptions {
  /** One Query per partition: its key condition, order, projection and starting key; no Limit. */
  readonly queries: readonly QueryCommandInput[];
  /** The unique sort attribute the partitions are merged on. */
  readonly sortKey: string;
  /** Newest (largest) first, as ScanIndexForward: false. */
  readonly descending: boolean;
  /** Rows the caller expects to take in all: each partition's first page is its share, later pages double. */
  readonly expected: number;
  /** The largest page a partition is read by. */
  readonly maxPage: number;
}

export class ShardMerge {
  private readonly partitions: Partition[];

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly options: ShardMergeOptions,
  ) {
    this.partitions = options.queries.map((input) => ({
      input,
      rows: [],
      cursor: input.ExclusiveStartKey,
      started: false,
      pages: 0,
    }));
  }

  /** The next row in the merged order, or undefined when every partition is read to its end. */
  async next(): Promise<Row | undefined> {
    await this.fill();
    let best: Partition | undefined;
    for (const partition of this.partitions) {
      const head = partition.rows[0];
      if (head === undefined) continue;
      if (!best || this.before(head, best.rows[0] as Row)) best = partition;
    }
    return best?.rows.shift();
  }

  /** Whether a row is left after the last one returned (reads on where a partition's next row is unknown). */
  async hasMore(): Promise<boolean> {
    await this.fill();
    return this.partitions.some((partition) => partition.rows.length > 0);
  }

  /** Reads a page of every partition whose next row is unknown (buffer empty, not read to its end). */
  private async fill(): Promise<void> {
    const unknown = this.partitions.filter((p) => p.rows.length === 0 && (!p.started || p.cursor !== undefined));
    await Promise.all(unknown.map((partition) => this.read(partition)));
  }

  /** Pages until a row comes or the partition ends (a page may be empty while a key is left). */
  private async read(partition: Partition): Promise<void> {
    const { expected, maxPage } = this.options;
    const share = Math.ceil(expected / this.partitions.length) + 1;
    do {
      const limit = Math.min(maxPage, share * 2 ** partition.pages);
      const page = await this.doc.send(
        new QueryCommand({ ...partition.input, Limit: limit, ExclusiveStartKey: partition.cursor }),
      );
      partition.started = true;
      partition.pages += 1;
      partition.rows.push(...(page.Items ?? []));
      partition.cursor = page.LastEvaluatedKey;
    } while (partition.rows.length === 0 && partition.cursor !== undefined);
  }

  private before(a: Row, b: Row): boolean {
    const [x, y] = [String(a[this.options.sortKey]), String(b[this.options.sortKey])];
    return this.options.descending ? x > y : x < y;
  }
}

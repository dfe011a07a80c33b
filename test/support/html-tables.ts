// Reading a rendered dashboard table back: the cells of the table with an id, row by row, as text.

/** The cells of the table `id` in `markup`, row by row (header row first), tags stripped. */
export function tableCells(markup: string, id: string): string[][] {
  const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(markup)?.[1];
  if (!table) throw new Error(`no table ${id}`);
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) =>
      (cell[1] ?? '').replace(/<[^>]+>/g, '').trim(),
    ),
  );
}

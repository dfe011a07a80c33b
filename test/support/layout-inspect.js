// The layout test's check, run in the page (test/browser/dashboard-layout.test.ts): an expression whose value
// is what the layout does wrong on the page shown.
(() => {
  const doc = document;
  const root = doc.documentElement;
  const viewport = root.clientWidth;
  const describe = (el) =>
    `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
  const visible = (el) => {
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    // checkVisibility: also false inside a closed <details> (its content is skipped, yet has boxes).
    return (
      el.checkVisibility({ visibilityProperty: true }) && style.display !== 'none' && box.width > 0 && box.height > 0
    );
  };
  // An element inside a scroll frame (overflow-x auto/scroll) or a visually hidden one (the skip link, a
  // caption kept for screen readers) is judged by that frame, not itself.
  const clipped = (el) => {
    for (let up = el.parentElement; up && up !== doc.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (['auto', 'scroll'].includes(style.overflowX)) return true;
    }
    return false;
  };
  const hidden = (el) => el.closest('.skip, .visually-hidden') !== null;
  const outside = [];
  for (const el of doc.body.querySelectorAll('*')) {
    if (hidden(el) || !visible(el) || clipped(el)) continue;
    const box = el.getBoundingClientRect();
    if (box.left < -1 || box.right > viewport + 1) outside.push(`${describe(el)} ${box.left}..${box.right}`);
  }
  const heights = {};
  for (const el of doc.querySelectorAll('input:not([type=checkbox]):not([type=radio]):not([type=hidden]), select')) {
    if (!visible(el)) continue;
    heights[`${el.tagName.toLowerCase()}#${el.id || el.name}`] = Math.round(el.getBoundingClientRect().height);
  }
  // A URL, a host name or an address may wrap only after one of these (or at a space).
  const boundary = /[./:?&=\-_@,;]/;
  const token = /(https?:\/\/|[A-Za-z0-9-]+\.[A-Za-z0-9-]+\.[A-Za-z]{2,}|@)/;
  const brokenTokens = [];
  const leaves = [...doc.querySelectorAll('main *')].filter(
    (el) => [...el.children].every((child) => child.tagName === 'WBR') && token.test(el.textContent ?? ''),
  );
  for (const el of leaves) {
    if (!visible(el) || hidden(el)) continue;
    const chars = [];
    const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = doc.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (rect) chars.push({ c: text[i] ?? '', top: rect.top });
      }
    }
    const text = chars.map((ch) => ch.c).join('');
    for (let i = 1; i < chars.length; i++) {
      const before = chars[i - 1];
      const at = chars[i];
      if (!before || !at || at.top <= before.top + 2 || /\s/.test(before.c) || /\s/.test(at.c)) continue;
      const start = text.lastIndexOf(' ', i) + 1;
      const end = text.indexOf(' ', i);
      const word = text.slice(start, end < 0 ? undefined : end);
      if (token.test(word) && !boundary.test(before.c))
        brokenTokens.push(`${word.slice(0, i - start)}|${word.slice(i - start)}`);
    }
  }
  return { overflow: root.scrollWidth - root.clientWidth, outside: outside.slice(0, 10), heights, brokenTokens };
})();

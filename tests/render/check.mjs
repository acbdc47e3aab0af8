// The render checker of forgelens's tests.
//
// forgelens claims that the text it hands an agent shows no hidden content and makes no client
// fetch another host. Looking at the text is not proof of that; rendering it is. This script
// renders each text as two real markdown renderers do (markdown-it with raw HTML on, marked with
// its GFM defaults), parses each HTML output as a browser parses `innerHTML` (parse5, a
// spec-compliant HTML parser, in a <div> of a <body>), and walks the tree for
//   - fetches: URLs an element makes the browser load without a click, outside `host`;
//   - hidden: content a reader would not see (comments, <template>, hidden or styled elements, …);
//   - text: the visible text, so that a test can see a marker arrive.
//
// stdin:  {"host": "127.0.0.1",
//          "texts": [{"id": "a", "text": "…", "kind": "markdown"|"plain"|"html"}]}
// stdout: {"results": [{"id": "a", "kind": "markdown", "renders": [
//            {"renderer": "markdown-it"|"marked"|"html", "html": "…",
//             "fetches": [{"element", "attribute", "value", "url", "host"}],
//             "hidden": [{"element", "reason", "content"}],
//             "text": "…"}]}]}
// A `plain` text is rendered as markdown too (a client may render any text); a caller asserts
// only its fetches. An `html` text is not rendered: it is parsed as it is (renderer "html"), to
// check the walk itself on markup that both renderers would escape.
// A fetch's `host` is the URL's host and port as WHATWG URL resolves it against
// https://HOST/ and against http://HOST/ (or a <base href> from either), the first that is not
// HOST; "" for a URL without one (data:, javascript:), and "unknown host" when it does not parse;
// both count as outside. The script reads no file and
// opens no connection.

import MarkdownIt from 'markdown-it';
import { Marked } from 'marked';
import { defaultTreeAdapter, parse, parseFragment } from 'parse5';

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const SVG_NS = 'http://www.w3.org/2000/svg';

const markdownIt = new MarkdownIt({ html: true, linkify: false });
const marked = new Marked(); // GFM defaults; raw HTML passes through

// Each renderer gives its HTML and the link reference definitions it consumed.
const RENDERERS = {
  'markdown-it': (text) => {
    const env = {};
    const html = markdownIt.render(text, env);
    return { html, definitions: Object.entries(env.references ?? {}) };
  },
  marked: (text) => {
    const tokens = marked.lexer(text);
    const html = marked.parser(tokens);
    return { html, definitions: Object.entries(tokens.links ?? {}) };
  },
};

// The element a client's rendered HTML lands in: a <div> in a <body>.
const CONTEXT = parse('<!DOCTYPE html><html><head></head><body><div></div></body></html>')
  .childNodes.find((n) => n.nodeName === 'html')
  .childNodes.find((n) => n.nodeName === 'body').childNodes[0];

// parse5's own tree, except that each run of characters keeps its own text node and so its own
// source location: then source that became no node at all (see `dropped`) can be found.
const UNMERGED = {
  ...defaultTreeAdapter,
  insertText: (parent, text) => defaultTreeAdapter.appendChild(parent, defaultTreeAdapter.createTextNode(text)),
  insertTextBefore: (parent, text, before) =>
    defaultTreeAdapter.insertBefore(parent, defaultTreeAdapter.createTextNode(text), before),
};

// Elements whose content the default style sheet of a browser does not show.
const UNSHOWN = new Set([
  'template', 'script', 'style', 'noscript', 'title', 'head', 'meta', 'link', 'base',
  'noembed', 'noframes', 'datalist', 'rp',
]);

// Attributes a browser loads by itself, per element (lower-case names, HTML elements).
const FETCHED = {
  img: ['src', 'srcset'],
  source: ['src', 'srcset'],
  video: ['poster', 'src'],
  audio: ['src'],
  track: ['src'],
  embed: ['src'],
  object: ['data'],
  iframe: ['src'],
  frame: ['src'],
  script: ['src'],
  link: ['href'],
};

function attr(node, name) {
  const found = (node.attrs ?? []).find((a) => attrName(a) === name);
  return found ? found.value : null;
}

function attrName(a) {
  return a.prefix ? `${a.prefix}:${a.name}` : a.name;
}

// The URLs of a srcset value: candidates split on commas outside their descriptors.
function srcsetUrls(value) {
  const urls = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /[\s,]/.test(value[i])) i++;
    let url = '';
    while (i < value.length && !/\s/.test(value[i])) url += value[i++];
    const trailing = url.match(/,+$/);
    if (trailing) url = url.slice(0, -trailing[0].length);
    if (url) urls.push(url);
    if (trailing) continue;
    let depth = 0;
    while (i < value.length && !(value[i] === ',' && depth === 0)) {
      if (value[i] === '(') depth++;
      if (value[i] === ')') depth--;
      i++;
    }
  }
  return urls;
}

// CSS as a browser reads it: comments gone, escapes undone (so `u\72l(` is `url(`).
function plainCss(css) {
  return css
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, '')
    .replace(/\\([0-9a-fA-F]{1,6})\s?/g, (_, hex) => String.fromCodePoint(Number.parseInt(hex, 16) || 0xfffd))
    .replace(/\\(.)/g, '$1');
}

// The URLs a piece of CSS loads: url(…), strings in image-set(…), @import "…".
function cssUrls(css) {
  const plain = plainCss(css);
  const urls = [];
  for (const m of plain.matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*?))\s*\)/gi)) {
    urls.push(m[1] ?? m[2] ?? m[3]);
  }
  // In image-set(…) a bare string is a URL too (its url(…) ones are counted above).
  for (const m of plain.matchAll(/image-set\(((?:[^()]|\([^()]*\))*)\)/gi)) {
    const strings = m[1].replace(/url\([^)]*\)/gi, '');
    for (const s of strings.matchAll(/"([^"]*)"|'([^']*)'/g)) urls.push(s[1] ?? s[2]);
  }
  for (const m of plain.matchAll(/@import\s+(?:"([^"]*)"|'([^']*)')/gi)) urls.push(m[1] ?? m[2]);
  return urls;
}

// Why a style attribute hides its element: a declaration that hides, else "styled".
function styleReason(style) {
  const declarations = plainCss(style)
    .split(';')
    .map((d) => d.split(':'))
    .filter((d) => d.length >= 2)
    .map(([p, ...v]) => [p.trim().toLowerCase(), v.join(':').replace(/!important/i, '').trim().toLowerCase()]);
  for (const [property, value] of declarations) {
    if (property === 'display' && value === 'none') return 'display:none';
    if (property === 'visibility' && (value === 'hidden' || value === 'collapse')) return 'visibility:hidden';
    if (property === 'opacity' && /^[+]?0*\.?0*%?$/.test(value)) return 'opacity:0';
    if (property === 'font-size' && /^[+]?0*\.?0*[a-z%]*$/.test(value)) return 'font-size:0';
  }
  return 'styled';
}

function textOf(node) {
  if (node.nodeName === '#text') return node.value;
  if (node.nodeName === '#comment') return node.data;
  const children = node.nodeName === 'template' ? node.content.childNodes : node.childNodes ?? [];
  return children.map(textOf).join('');
}

// One rendered HTML string, walked as a browser would build it.
function inspect(html, host, definitions) {
  const fetches = [];
  const hidden = [];
  let text = '';
  // The forge may be served over https or http, and `https:/x` is the host x only from an http
  // page: a URL is resolved from both, and counts as outside when either takes it outside.
  const pages = [new URL(`https://${host}/`), new URL(`http://${host}/`)];
  const page = pages[0];

  const fragment = parseFragment(CONTEXT, html, { sourceCodeLocationInfo: true, treeAdapter: UNMERGED });

  // A <base href> anywhere in the document moves every relative URL.
  let bases = pages;
  const firstBase = find(fragment, (n) => n.nodeName === 'base' && attr(n, 'href') !== null);
  if (firstBase) {
    try {
      bases = pages.map((p) => new URL(attr(firstBase, 'href'), p));
    } catch {
      /* an unparseable base is ignored by browsers */
    }
  }

  const fetch = (element, attribute, value) => {
    for (const base of bases) {
      let url = null;
      let where = 'unknown host';
      try {
        const parsed = new URL(value, base);
        url = parsed.href;
        where = parsed.host;
      } catch {
        /* unparseable: counts as outside */
      }
      if (where !== page.host) {
        fetches.push({ element, attribute, value, url, host: where });
        return;
      }
    }
  };
  const hide = (element, reason, content) => hidden.push({ element, reason, content });

  const walk = (node, unseen, path) => {
    const name = node.nodeName;
    if (name === '#text') {
      if (!unseen) text += node.value;
      return;
    }
    if (name === '#comment') {
      hide('#comment', 'comment', node.data);
      return;
    }
    const tag = (node.tagName ?? '').toLowerCase();
    const here = path ? `${path} ${tag}` : tag;
    const svg = node.namespaceURI === SVG_NS;
    const html = node.namespaceURI === HTML_NS;

    // What it loads.
    for (const a of node.attrs ?? []) {
      const an = attrName(a).toLowerCase();
      const listed = html && (FETCHED[tag] ?? []).includes(an);
      const svgRef = svg && tag !== 'a' && (an === 'href' || an === 'xlink:href');
      const inputImage = html && tag === 'input' && an === 'src' && (attr(node, 'type') ?? '').toLowerCase() === 'image';
      if (an === 'srcset' && listed) srcsetUrls(a.value).forEach((u) => fetch(here, an, u));
      else if (listed || svgRef || inputImage || an === 'background') fetch(here, an, a.value);
      if (an === 'style') cssUrls(a.value).forEach((u) => fetch(here, 'style', u));
    }
    if (tag === 'style') cssUrls(textOf(node)).forEach((u) => fetch(here, '<style>', u));
    if (tag === 'meta' && (attr(node, 'http-equiv') ?? '').toLowerCase() === 'refresh') {
      const target = (attr(node, 'content') ?? '').match(/url\s*=\s*['"]?([^'"]*)/i);
      if (target) fetch(here, 'content', target[1].trim());
    }
    const srcdoc = tag === 'iframe' ? attr(node, 'srcdoc') : null;
    if (srcdoc !== null) {
      fetches.push(...inspect(srcdoc, host, []).fetches.map((f) => ({ ...f, element: `${here}[srcdoc] ${f.element}` })));
    }
    // With scripting off (a sandboxed preview), <noscript>'s text is markup that loads too.
    if (tag === 'noscript') {
      fetches.push(...inspect(textOf(node), host, []).fetches.map((f) => ({ ...f, element: `${here} ${f.element}` })));
    }

    // Whether a reader sees it.
    let hides = unseen;
    const hideHere = (reason, content = textOf(node)) => {
      hide(here, reason, content);
      hides = true;
    };
    if (html && UNSHOWN.has(tag)) {
      const content = { meta: attr(node, 'content'), base: attr(node, 'href'), link: attr(node, 'href') }[tag];
      hideHere(tag, content ?? textOf(node));
    }
    if (html && tag === 'input' && (attr(node, 'type') ?? '').toLowerCase() === 'hidden') hideHere('input type=hidden', attr(node, 'value') ?? '');
    if (html && tag === 'dialog' && attr(node, 'open') === null) hideHere('closed dialog');
    if (attr(node, 'hidden') !== null) hideHere('hidden attribute');
    const style = attr(node, 'style');
    if (style !== null) {
      const reason = styleReason(style);
      if (reason === 'styled') hide(here, reason, textOf(node));
      else hideHere(reason);
    }
    if (svg) {
      for (const [a, reason, test] of [
        ['display', 'display:none', (v) => v === 'none'],
        ['visibility', 'visibility:hidden', (v) => v === 'hidden' || v === 'collapse'],
        ['opacity', 'opacity:0', (v) => /^0*\.?0*%?$/.test(v)],
        ['font-size', 'font-size:0', (v) => /^0*\.?0*[a-z%]*$/.test(v)],
      ]) {
        const v = attr(node, a);
        if (v !== null && test(v.trim().toLowerCase())) hideHere(reason);
      }
    }

    if (tag === 'template') {
      // Its content is inert: shown nowhere, loaded never.
      return;
    }
    const children = node.childNodes ?? [];
    if (html && tag === 'details' && attr(node, 'open') === null) {
      const summary = children.find((c) => (c.tagName ?? '').toLowerCase() === 'summary');
      const rest = children.filter((c) => c !== summary);
      hide(here, 'closed details', rest.map(textOf).join(''));
      for (const c of children) walk(c, hides || c !== summary, here);
      return;
    }
    for (const c of children) walk(c, hides, here);
    if (html && tag === 'br' && !hides) text += '\n';
  };

  for (const c of fragment.childNodes) walk(c, false, '');

  // Source the parser dropped without a node: a <!DOCTYPE>, a <head> tag, an end tag's attributes.
  for (const span of dropped(html, fragment)) hide('#dropped', 'dropped by the parser', span);

  for (const [label, { href, title }] of definitions) {
    hide('#definition', 'reference definition', `[${label}]: ${href}${title ? ` "${title}"` : ''}`);
  }
  return { fetches, hidden, text };
}

function find(node, test) {
  for (const c of node.childNodes ?? []) {
    if (test(c)) return c;
    const deeper = find(c, test);
    if (deeper) return deeper;
  }
  return null;
}

// Stretches of `html` that no node of the tree came from, other than white space and plain end
// tags.
function dropped(html, fragment) {
  const covered = new Uint8Array(html.length);
  const cover = (loc) => {
    if (loc) covered.fill(1, loc.startOffset, loc.endOffset);
  };
  const visit = (node) => {
    const loc = node.sourceCodeLocation;
    if (loc && node.nodeName.startsWith('#')) cover(loc);
    if (loc && loc.startTag) {
      cover(loc.startTag);
      cover(loc.endTag);
    }
    (node.childNodes ?? []).forEach(visit);
    if (node.content) node.content.childNodes.forEach(visit);
  };
  fragment.childNodes.forEach(visit);
  const spans = [];
  let start = -1;
  for (let i = 0; i <= html.length; i++) {
    if (i < html.length && !covered[i]) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      spans.push(html.slice(start, i));
      start = -1;
    }
  }
  return spans
    .flatMap((s) => s.split(/(?<=>)/))
    .filter((s) => s.trim() !== '' && !/^\s*<\/[a-zA-Z][^\s/>]*\s*>\s*$/.test(s));
}

function main(input) {
  const { host, texts } = JSON.parse(input);
  const results = texts.map(({ id, text, kind }) => ({
    id,
    kind,
    renders:
      kind === 'html'
        ? [{ renderer: 'html', html: text, ...inspect(text, host, []) }]
        : Object.entries(RENDERERS).map(([renderer, render]) => {
            const { html, definitions } = render(text);
            return { renderer, html, ...inspect(html, host, definitions) };
          }),
  }));
  process.stdout.write(JSON.stringify({ results }));
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => main(input));

import t from 'tap';
import { isActiveContent, mediaType } from '../../../core/http/content-type.js';

t.test('mediaType: the essence of one well-formed media type, or nothing', async (t) => {
  t.equal(mediaType(' Text/HTML; charset=UTF-8 '), 'text/html');
  t.equal(mediaType('text/plain;charset="utf-8"'), 'text/plain');
  t.equal(mediaType('application/rss+xml'), 'application/rss+xml');
  for (const bad of [
    '',
    'html',
    'text/',
    '/html',
    'text /html',
    'text/plain, text/html',
    'text/plain;,text/html',
    'text/plain; a="x,y"',
    'text/plain;',
    'text/html\u0000',
    'a/b/c',
  ]) {
    t.equal(mediaType(bad), undefined, JSON.stringify(bad));
  }
});

t.test('isActiveContent: every type a browser may run, whatever its spelling', async (t) => {
  for (const active of [
    'text/html',
    ' text/html',
    'TEXT/HTML',
    'text/html; charset=utf-8',
    'text/html ;charset=utf-8',
    'application/xhtml+xml',
    'image/svg+xml',
    'text/xml',
    'application/xml',
    'text/xsl',
    'application/rss+xml',
    'application/atom+xml',
    'application/xslt+xml',
    'Application/MathML+XML; x=1',
    'text/plain;,text/html',
    'text/plain, text/html',
    'garbage',
    '',
  ])
    t.ok(isActiveContent(active), JSON.stringify(active));
  for (const passive of [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/json',
    'image/png',
    'application/octet-stream',
    'text/css',
    'application/x-test',
  ]) {
    t.notOk(isActiveContent(passive), passive);
  }
});

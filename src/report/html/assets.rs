//! The HTML report's inline style sheet and script (the legend's show/hide and the points'
//! values on hover or focus). Owns their text; must not know a study or a chart's data.

pub(super) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}\
h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:8px}\
figure{margin:0;border:1px solid #e3e3e3}figure.chart{max-width:542px}figure.multiples{max-width:none;flex-basis:100%}figcaption{font-size:12px;color:#555;padding:2px 8px 6px}\
figure h3{font-size:15px;font-weight:600;margin:8px 8px 2px}.panels{display:flex;flex-wrap:wrap}\
.profile{font-size:13px;font-weight:600;text-align:center;margin-top:6px}svg{display:block;max-width:100%;height:auto}\
.legend{display:flex;flex-wrap:wrap;gap:2px 8px;padding:0 4px;font-size:13px}\
.legend button{font:inherit;color:#222;background:none;border:1px solid transparent;border-radius:3px;padding:1px 5px;cursor:pointer}\
.legend button:hover{border-color:#bbb}.legend button[aria-pressed=false]{opacity:.4;text-decoration:line-through}\
.swatch{display:inline-block;width:24px;margin-right:5px;text-align:center;background:linear-gradient(currentColor,currentColor) center/100% 2px no-repeat}\
g.off{display:none}.hit{fill:none;stroke:none;pointer-events:all;cursor:crosshair}.hit:hover,.hit:focus{stroke:#222;stroke-width:1.5;outline:none}\
#tip{position:fixed;z-index:10;pointer-events:none;background:#222;color:#fff;font-size:12px;line-height:1.4;padding:4px 8px;border-radius:4px;white-space:pre-line;max-width:340px}\
.warn{background:#fff6e0;border-left:4px solid #e6a100;padding:6px 10px;font-size:14px}\
pre{font-size:12px;background:#fafafa;padding:8px;overflow-x:auto}.better{color:#006b3c}.worse{color:#b00020}\
.sub{color:#555;margin-top:-8px}.scroll{overflow-x:auto;max-width:100%}\
.summary>p:first-child{font-size:18px;font-weight:600;margin:8px 0}.summary ul{font-size:14px;padding-left:20px}\
details.trust{margin:12px 0;font-size:14px}details.trust summary{cursor:pointer;color:#333}\
nav.toc{font-size:14px;margin:12px 0}nav.toc ol{columns:2;margin:4px 0}\
@media print{body{max-width:none;margin:0}details.trust>*{display:block}nav.toc,#tip,.legend button{display:none}section{break-inside:avoid-page}}";

/// The page's only script, inline: a point's or bar's value in a tooltip on hover or
/// keyboard focus (its `data-tip`), and legend buttons that hide or show their series in
/// every chart of their figure.
pub(super) const SCRIPT: &str = r#"(function(){
var tip=document.getElementById('tip');
function show(t){
tip.textContent=t.getAttribute('data-tip');tip.hidden=false;
var r=t.getBoundingClientRect(),w=tip.offsetWidth,h=tip.offsetHeight,x=r.right+8,y=r.top-h-6;
if(x+w>innerWidth-4)x=Math.max(4,r.left-w-8);
if(y<4)y=r.bottom+6;
tip.style.left=x+'px';tip.style.top=y+'px';}
function follow(e){var t=e.target.closest&&e.target.closest('[data-tip]');if(t)show(t);else tip.hidden=true;}
document.addEventListener('pointerover',follow);
document.addEventListener('focusin',follow);
document.documentElement.addEventListener('pointerleave',function(){tip.hidden=true;});
document.addEventListener('click',function(e){
var b=e.target.closest&&e.target.closest('.legend button');if(!b)return;
var shown=b.getAttribute('aria-pressed')!=='true';b.setAttribute('aria-pressed',String(shown));
b.closest('figure').querySelectorAll('g.series[data-series="'+b.getAttribute('data-series')+'"]')
.forEach(function(g){g.classList.toggle('off',!shown);});
tip.hidden=true;});
})();"#;

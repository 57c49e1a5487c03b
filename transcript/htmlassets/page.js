(function(){
var q=document.getElementById("q"),n=document.getElementById("n"),items=null,texts=null,timer=0;
function run(){
var v=q.value.trim().toLowerCase();
if(!items){items=Array.prototype.slice.call(document.querySelectorAll(".i"));}
if(!v){for(var i=0;i<items.length;i++){items[i].hidden=false;}n.textContent="";return;}
if(!texts){texts=items.map(function(e){return e.textContent.toLowerCase();});}
var c=0;
for(var j=0;j<items.length;j++){
var m=texts[j].indexOf(v)>=0;items[j].hidden=!m;
if(m){c++;var ds=items[j].querySelectorAll("details");for(var k=0;k<ds.length;k++){if(ds[k].textContent.toLowerCase().indexOf(v)>=0){ds[k].open=true;}}}
}
n.textContent=c+" of "+items.length+(c===1?" entry matches":" entries match");
}
q.addEventListener("input",function(){clearTimeout(timer);timer=setTimeout(run,120);});
q.addEventListener("keydown",function(e){if(e.key==="Enter"){clearTimeout(timer);run();}});
})();

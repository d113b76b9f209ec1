set -u
L=build-me/lguest-kvm
for m in lguest threaded; do
 for pol in dynamic static:100 static:40; do
  rm -f /tmp/vmq/ready
  ( timeout -s KILL 600 $L receive --listen 127.0.0.1:0 --bytes 32M --ready /tmp/vmq/ready --timeout 300 </dev/null >/dev/null 2>&1 ) &
  for _ in $(seq 400); do [ -s /tmp/vmq/ready ] && break; sleep 0.05; done
  A=$(cat /tmp/vmq/ready)
  n=$m-${pol/:/}
  $L run --model $m --workload tcp --net user --peer "10.0.2.2:${A##*:}" --bytes 32M --policy $pol --quiet --trace /tmp/vmq/$n.bin --stats-json /tmp/vmq/$n.json 2>/tmp/vmq/$n.err
  echo "$n rc=$?"
  wait
 done
done

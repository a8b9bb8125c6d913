// Runs Kafka's own client-side assignors (kafka-clients jar) on cases read from stdin, one per
// line, and prints each assignment; used by test_assignors_vs_kafka.py to compare with the model.
// Line:   assignor|topic:count,...|member:topic;topic:owned-topic-partition;...:generation|...
// Output: RESULT member=topic-partition,...|member=...   (members and partitions sorted)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor;
import org.apache.kafka.common.TopicPartition;

public class KafkaAssignorHarness {
    // StickyAssignor reads owned partitions and generation from its user data
    // (STICKY_ASSIGNOR_USER_DATA_V1: [topic string, partitions int32[]][], generation int32).
    static ByteBuffer stickyUserData(List<TopicPartition> owned, Optional<Integer> generation) {
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        for (TopicPartition tp : owned) byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
        ByteBuffer b = ByteBuffer.allocate(4096);
        b.putInt(byTopic.size());
        for (Map.Entry<String, List<Integer>> e : byTopic.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            b.putShort((short) name.length);
            b.put(name);
            b.putInt(e.getValue().size());
            for (int p : e.getValue()) b.putInt(p);
        }
        b.putInt(generation.orElse(-1));
        b.flip();
        return b;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\\|", -1);
            String name = parts[0];
            Map<String, Integer> counts = new HashMap<>();
            if (!parts[1].isEmpty())
                for (String tc : parts[1].split(",")) {
                    String[] x = tc.split(":");
                    counts.put(x[0], Integer.parseInt(x[1]));
                }
            Map<String, ConsumerPartitionAssignor.Subscription> subs = new HashMap<>();
            for (int i = 2; i < parts.length; i++) {
                String[] f = parts[i].split(":", -1);
                List<String> topics = f[1].isEmpty() ? List.of() : Arrays.asList(f[1].split(";"));
                List<TopicPartition> owned = new ArrayList<>();
                if (!f[2].isEmpty())
                    for (String tp : f[2].split(";")) {
                        int k = tp.lastIndexOf('-');
                        owned.add(new TopicPartition(tp.substring(0, k), Integer.parseInt(tp.substring(k + 1))));
                    }
                Optional<Integer> gen = f[3].isEmpty() ? Optional.empty() : Optional.of(Integer.parseInt(f[3]));
                ByteBuffer userData = name.equals("sticky") && !owned.isEmpty() ? stickyUserData(owned, gen) : null;
                List<TopicPartition> ownedField = name.equals("sticky") ? List.of() : owned;
                subs.put(f[0], new ConsumerPartitionAssignor.Subscription(
                    topics, userData, ownedField, gen.orElse(-1), Optional.empty()));
            }
            // As AbstractPartitionAssignor.assign(Cluster, GroupSubscription) does: only topics
            // someone subscribes to reach the assignor.
            Set<String> subscribed = new HashSet<>();
            for (ConsumerPartitionAssignor.Subscription s : subs.values()) subscribed.addAll(s.topics());
            counts.keySet().retainAll(subscribed);
            AbstractPartitionAssignor assignor;
            switch (name) {
                case "range": assignor = new RangeAssignor(); break;
                case "roundrobin": assignor = new RoundRobinAssignor(); break;
                case "sticky": assignor = new StickyAssignor(); break;
                case "cooperative-sticky": assignor = new CooperativeStickyAssignor(); break;
                default: throw new IllegalArgumentException(name);
            }
            String out;
            try {
                Map<String, List<TopicPartition>> result = assignor.assign(counts, subs);
                StringBuilder sb = new StringBuilder();
                for (String member : new TreeSet<>(result.keySet())) {
                    List<String> tps = new ArrayList<>();
                    for (TopicPartition tp : result.get(member)) tps.add(tp.topic() + "-" + tp.partition());
                    Collections.sort(tps);
                    if (sb.length() > 0) sb.append('|');
                    sb.append(member).append('=').append(String.join(",", tps));
                }
                out = sb.toString();
            } catch (RuntimeException e) {
                out = "ERROR " + e.getClass().getSimpleName();
            }
            System.out.println("RESULT " + out);
        }
    }
}
